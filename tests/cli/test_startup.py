"""`veil --help` answers without importing the heavy libraries (the speed is
measured in benchmarks/bench_everyday.py; here only what cannot fail by load)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "numpy", "sklearn", "matplotlib", "scipy", "PySide6", "pyarrow")


def modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return {m.split(".")[0] for m in out.split()}


def test_help_imports_no_heavy_library():
    loaded = modules_after(
        "from veil.desktop.launcher import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    )
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_importing_the_engine_is_lazy_yet_complete():
    assert modules_after("import veil.engine").isdisjoint(HEAVY)
    loaded = modules_after("from veil.engine import Table, hookimpl, make_registry")
    assert "pandas" in loaded  # the names resolve to the real objects on first use


def test_registering_the_plugins_imports_no_learner_and_no_plotting():
    """Every command and the desktop's start make the registry: scikit-learn, SciPy's statistics and
    optimiser, matplotlib and numba come on first use (a classifier metric, a study's chart, a
    longest-pattern search)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from veil.engine import make_registry\nr = make_registry()\n"
            "import sys\nprint(len(r.names('metric')), ' '.join(sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert int(out[0]) > 0  # the plugins did register
    loaded = set(out[1:])
    late = {"sklearn", "matplotlib", "scipy.stats", "scipy.optimize", "scipy.special", "numba"}
    assert loaded.isdisjoint(late), sorted(loaded & late)


def test_a_second_export_of_the_same_input_trains_and_draws_nothing(tmp_path):
    """The report's classifier figures come from the user's cache the second time,
    in a fresh process: the same figures, and scikit-learn is not imported (what made a report cost
    seconds); its charts are vector drawings, so neither run imports matplotlib or Pillow."""
    import json

    from tests.cli.helpers import SMALL_CSV

    data = tmp_path / "small.csv"
    header, *rows = SMALL_CSV.strip().splitlines()
    data.write_text("\n".join([header, *rows * 3]) + "\n")
    env = {**__import__("os").environ, "VEIL_CACHE_DIR": str(tmp_path / "cache")}
    code = (
        "import sys\nfrom veil.desktop.launcher import main\n"
        "try:\n    assert not main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print(' '.join(sys.modules))"
    )
    manifests, loaded = [], []
    for run in ("first", "second"):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                "run",
                "--data",
                str(data),
                "--identifier",
                "name",
                "--quasi",
                "age_band,sex",
                "--target",
                "outcome",
                "--method",
                "all-features",
                "--model",
                "k-anonymity:k=2",
                "--out",
                str(tmp_path / run),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=True,
        ).stdout
        loaded.append({m.split(".")[0] for m in out.split()})
        manifests.append(json.loads((tmp_path / run / "manifest.json").read_text()))
        assert (tmp_path / run / "report.pdf").read_bytes().startswith(b"%PDF")
    assert "sklearn" in loaded[0]  # the first trains; the charts are drawn without a plotting library
    assert loaded[0].isdisjoint({"matplotlib", "PIL"}), sorted(loaded[0] & {"matplotlib", "PIL"})
    assert loaded[1].isdisjoint({"sklearn", "matplotlib", "PIL"}), sorted(loaded[1] & {"sklearn", "matplotlib"})
    assert manifests[0]["utility"]["before"] and manifests[0]["utility"]["after"]
    assert manifests[1]["utility"] == manifests[0]["utility"]
