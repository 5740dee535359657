"""Differential-privacy noise: its distribution (chi-square / Kolmogorov–Smirnov against the exact
laws), the seeded source reproducible, the secure source not, and `veil run` using the secure one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from veil.engine import SECURE, SEEDED, Context, SecureNoise, SeededNoise
from veil.engine.run import noise as noise_module
from veil.cli import main

P_FLOOR = 0.001  # each test below fails by chance once in a thousand runs at most (fixed seeds: never)


def discrete_laplace_pmf(z: np.ndarray, scale: float) -> np.ndarray:
    alpha = np.exp(-1 / scale)
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)


def chi_square_pvalue(draws: np.ndarray, scale: float) -> float:
    """Chi-square of integer draws against the discrete Laplace law; the tails beyond ±3·scale pooled."""
    edge = int(np.ceil(3 * scale))
    inner = np.arange(-edge, edge + 1)
    pmf = discrete_laplace_pmf(inner, scale)
    tail = (1 - pmf.sum()) / 2
    expected = np.concatenate([[tail], pmf, [tail]]) * len(draws)
    observed = np.concatenate([[(draws < -edge).sum()], [(draws == z).sum() for z in inner], [(draws > edge).sum()]])
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("scale", [0.5, 4.0])
def test_seeded_discrete_laplace_follows_its_law(scale):
    draws = SeededNoise(np.random.default_rng(11)).discrete_laplace(np.zeros(20_000, dtype=np.int64), scale)
    assert draws.dtype == np.int64
    assert chi_square_pvalue(draws, scale) > P_FLOOR


@pytest.mark.parametrize("scale", [0.5, 4.0])
def test_secure_discrete_laplace_follows_its_law(scale):
    draws = SecureNoise().discrete_laplace(np.zeros(3_000, dtype=np.int64), scale)
    assert draws.dtype == np.int64
    assert chi_square_pvalue(draws, scale) > P_FLOOR


def test_a_wrong_law_is_caught():  # the chi-square above has the power to see a wrong scale
    draws = SeededNoise(np.random.default_rng(12)).discrete_laplace(np.zeros(20_000, dtype=np.int64), 4.0)
    assert chi_square_pvalue(draws, 3.0) < P_FLOOR


@pytest.mark.parametrize("make", [lambda: SeededNoise(np.random.default_rng(13)), SecureNoise], ids=[SEEDED, SECURE])
def test_laplace_passes_kolmogorov_smirnov(make):
    values = np.linspace(-5, 5, 2_000)
    noisy = make().laplace(values, 2.5)
    assert noisy.shape == values.shape
    assert stats.kstest(noisy - values, stats.laplace(scale=2.5).cdf).pvalue > P_FLOOR


@pytest.mark.parametrize("make", [lambda: SeededNoise(np.random.default_rng(14)), SecureNoise], ids=[SEEDED, SECURE])
def test_uniform_passes_kolmogorov_smirnov(make):
    noise = make()
    draws = [noise.uniform() for _ in range(2_000)]
    assert all(0 <= u < 1 for u in draws) and stats.kstest(draws, "uniform").pvalue > P_FLOOR


def test_noise_adds_to_the_counts_it_is_given():
    counts = np.arange(0, 20_000, 10, dtype=np.int64).reshape(-1, 2)
    for noise in (SeededNoise(np.random.default_rng(15)), SecureNoise()):
        noisy = noise.discrete_laplace(counts, 1.0)
        assert noisy.shape == counts.shape and np.abs(noisy - counts).max() < 40


def test_seeded_noise_repeats_and_secure_noise_does_not():
    zeros = np.zeros(200, dtype=np.int64)
    same = [Context(7).noise.discrete_laplace(zeros, 5.0) for _ in range(2)]
    assert (same[0] == same[1]).all()
    secure = [Context(7, noise_source=SECURE).noise.discrete_laplace(zeros, 5.0) for _ in range(2)]
    assert not (secure[0] == secure[1]).all()  # equal by chance with probability < 0.2^200


def test_children_keep_their_parents_source():
    assert Context(1, noise_source=SECURE).child(0, 1, seed=5).noise.source == SECURE
    assert Context(1).child(0, 1).noise.source == SEEDED


def test_veil_run_draws_its_dp_noise_from_the_secure_source(tmp_path, monkeypatch, capsys):
    calls = []
    original = noise_module.SecureNoise.discrete_laplace

    def recording(self, counts, scale):
        calls.append(scale)
        return original(self, counts, scale)

    monkeypatch.setattr(noise_module.SecureNoise, "discrete_laplace", recording)
    monkeypatch.setattr(
        noise_module.SeededNoise,
        "discrete_laplace",
        lambda *a: pytest.fail("a release drew its noise from the seeded generator"),
    )
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--demo",
            "--release-sensitive",
            "diagnosis_group",
            "--method",
            "exponential-dp-fs:epsilon=1,m=3",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert calls == [pytest.approx(4.0)]  # one histogram, scale 2/(ε/2)
    budget = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["privacy_budget"]
    assert budget["noise"].startswith("secure: the operating system's random source")


def test_study_mode_is_seeded_and_reproducible():
    from veil.engine import PluginCall, RunSpec, execute, load_demo, make_registry

    registry, data = make_registry(), load_demo()
    spec = RunSpec(PluginCall("laplace-dp-fs", {"epsilon": 0.5, "m": 3}), seed=3)
    first, second = (execute(registry, data, spec, Context(3)).release for _ in range(2))
    assert first.details["noise_source"].startswith("seeded")
    assert first.frame.equals(second.frame)
    other = execute(registry, data, RunSpec(spec.method, seed=4), Context(4)).release
    assert not other.frame.equals(first.frame)
