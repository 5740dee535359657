"""Memory is known before it is spent (docs/design.md, "Memory"): every plugin's declared cost bounds
what it really allocates, and a run that would need more than the process may allocate is refused
with one line before it starts, never killed by the operating system."""

from __future__ import annotations

import resource
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from veil.engine import (
    BadInput,
    Context,
    MemoryEstimate,
    PluginCall,
    RunSpec,
    check_memory,
    default_metrics,
    estimate_method,
    execute,
    load_demo,
    make_registry,
    parse_transactions,
    prepare,
)
from veil.engine.run.memory import release_shape, shape_of

# methods that take many seconds on the demo (their costs are fixed working memories; every method runs
# under the 4 GB limit in benchmarks/bench_memory_matrix.py, whose table is in docs/benchmarks.md): the
# suite checks the rest
SLOW = {"fwell", "private-fwell", "privacy-aware-candidates", "patternka-relational"}
MODELS = (
    None,
    PluginCall("k-anonymity", {"k": 5}),
    PluginCall("set-k-anonymity", {"k": 5}),
    PluginCall("k-ac", {"k": 5}),
)


def _baskets(n=1500, items=300, seed=1):
    rng = np.random.default_rng(seed)
    lines = [" ".join(map(str, sorted(set(rng.zipf(1.6, rng.integers(1, 12)) % items)))) for _ in range(n)]
    return parse_transactions(("\n".join(lines) + "\n").encode())


def _peak(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _runs(registry):
    demo = load_demo().take(np.arange(1500))
    for data in (demo, _baskets()):
        for name in registry.names("algorithm"):
            if name in SLOW:
                continue
            for model in MODELS:
                try:
                    spec = RunSpec(PluginCall(name), model)
                    execute(registry, data, RunSpec(PluginCall(name), model, metrics=()), Context(0))
                except BadInput:
                    continue
                yield data, spec
                break


def test_every_declared_cost_bounds_what_the_plugin_allocates():
    """Each method on the demo table and on item sets, then each of its default metrics on its release:
    the peak of what it allocates (tracemalloc) is within its declared MemoryCost."""
    registry = make_registry()
    checked, over = [], []
    for data, spec in _runs(registry):
        algorithm = registry.algorithm(spec.method.name)
        params = algorithm.params({})
        model = None
        if spec.model is not None:
            from veil.engine import bind_models

            model = bind_models(registry, spec.models)
        prepared = prepare(data, algorithm, None)
        release, peak = _peak(lambda: algorithm.run(prepared, model, params, Context(0)))
        declared = algorithm.memory(shape_of(prepared), params)
        checked.append(algorithm.name)
        if peak > declared:
            over.append((algorithm.name, peak, declared))
        metric_names = default_metrics(registry, algorithm.name, spec.model.name if spec.model else None)
        for name in metric_names:
            metric = registry.metric(name)
            metric_params = metric.params({})
            value, peak = _peak(lambda: metric.compute(prepared, release, metric_params, Context(0)))
            declared = metric.memory(release_shape(release, shape_of(prepared)), metric_params)
            if peak > declared:
                over.append((f"{algorithm.name} / {name}", peak, declared))
    assert len(checked) >= 10 and over == []


def test_a_run_that_needs_more_than_there_is_is_refused_in_one_line():
    estimate = MemoryEstimate((("the data", 10**8), ("method mondrian", 3 * 10**9)), int(1.25 * 3.1e9))
    with pytest.raises(BadInput) as err:
        check_memory(estimate, (2 * 10**9, "available on this machine"))
    text = str(err.value)
    assert "\n" not in text and text.startswith("not enough memory: this run needs about 3.9 GB")
    assert "method mondrian, 3.0 GB" in text and "2.0 GB is available on this machine" in text
    check_memory(estimate, (4 * 10**9, "available on this machine"))  # enough: no refusal


def test_the_estimate_grows_with_the_data():
    registry = make_registry()
    algorithm = registry.algorithm("mondrian")
    demo = load_demo()
    small = dict(estimate_method(algorithm, algorithm.params({}), demo.take(np.arange(500))).parts)
    large = dict(estimate_method(algorithm, algorithm.params({}), demo).parts)
    fixed = algorithm.memory_cost.fixed
    assert 8 < (large["method mondrian"] - fixed) / (small["method mondrian"] - fixed) < 12  # ten times the records
    assert 8 < large["the data"] / small["the data"] < 12


def _limited(limit_bytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


LIMIT = 4 * 2**30


@pytest.mark.parametrize("method", ["mondrian", "hilbert", "greedy-hamdist", "all-features"])
def test_under_a_4_gb_address_space_limit_the_demo_runs_cleanly(method, tmp_path):
    """The real command line, with the default metrics, in an address space of 4 GB: a clean success
    or the one-line refusal, never a kill."""
    model = [] if method == "all-features" else ["--model", "k-anonymity:k=5"]
    model += ["--release-sensitive", "diagnosis_group"] if method in ("mondrian", "hilbert", "all-features") else []
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "veil.cli",
            "run",
            "--demo",
            "--method",
            method,
            *model,
            "--no-report",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        preexec_fn=_limited(LIMIT),
        timeout=300,
    )
    assert done.returncode == 0 or (done.returncode == 2 and "not enough memory" in done.stderr), done.stderr
    assert done.returncode >= 0  # not ended by a signal


def test_under_the_limit_a_run_too_large_is_refused_before_it_starts(tmp_path):
    """Randomisation flipping holds the records × items matrix dense: on 200,000 baskets of 20,000
    possible items that is far beyond 4 GB, and the run says so at once instead of growing."""
    rng = np.random.default_rng(0)
    path = tmp_path / "baskets.dat"
    with open(path, "w") as f:
        for _ in range(200_000):
            f.write(" ".join(map(str, rng.choice(20_000, rng.integers(1, 7), replace=False))) + "\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "veil.cli",
            "run",
            "--data",
            str(path),
            "--method",
            "rf-flipping",
            "--model",
            "k-anonymity:k=5",
            "--no-report",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        preexec_fn=_limited(LIMIT),
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    *notes, error = done.stderr.splitlines()  # a note may say how the file was read first
    assert error.startswith("veil: error: not enough memory: this run needs about") and "rf-flipping" in error
    assert all(line.startswith("note: ") for line in notes) and not out.exists()


def test_a_table_is_not_converted_when_the_conversion_would_not_fit(monkeypatch):
    """Turning a table into a binary matrix is estimated before it starts (a library that runs out of
    memory there may end the process instead of raising): with too little left, one line names the
    conversion; with enough, the same table converts."""
    from veil.engine.run import memory

    registry = make_registry()
    demo = load_demo()
    greedy = registry.algorithm("greedy-hamdist")
    monkeypatch.setattr(memory, "available_memory", lambda: (10**6, "available on this machine"))
    with pytest.raises(BadInput, match="not enough memory: .*turning the table into a binary matrix"):
        prepare(demo, greedy, None)
    assert prepare(demo, registry.algorithm("mondrian"), None) is demo  # a table method converts nothing
    monkeypatch.setattr(memory, "available_memory", lambda: (10**10, "available on this machine"))
    assert prepare(demo, greedy, None).n_rows == demo.n_rows


def test_an_export_that_would_not_fit_is_refused_before_a_byte_is_written(monkeypatch, tmp_path):
    """Writing a release and reading the file back is estimated first: with too little memory left,
    one line names that step and the folder is not created; with enough, the same release exports."""
    from veil.engine import export_release
    from veil.engine.run import memory

    registry = make_registry()
    result = execute(
        registry,
        load_demo(),
        RunSpec(PluginCall("mondrian"), PluginCall("k-anonymity", {"k": 5}), metrics=()),
        Context(0),
        release_sensitive=("diagnosis_group",),
    )
    monkeypatch.setattr(memory, "available_memory", lambda: (10**6, "available on this machine"))
    with pytest.raises(BadInput, match="not enough memory: .*writing the release and reading it back"):
        export_release(registry, result, tmp_path / "out", report=None)
    assert not (tmp_path / "out").exists()
    monkeypatch.setattr(memory, "available_memory", lambda: (10**10, "available on this machine"))
    export_release(registry, result, tmp_path / "out", report=None)
    assert (tmp_path / "out" / "manifest.json").exists()
