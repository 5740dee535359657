"""Issue 13 item 17: `veil --help` answers without importing the heavy libraries (the speed is
measured in benchmarks/bench_everyday.py; here only what cannot fail by load)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "numpy", "sklearn", "matplotlib", "scipy", "PySide6", "pyarrow")


def modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return {m.split(".")[0] for m in out.split()}


def test_help_imports_no_heavy_library():
    loaded = modules_after("from veil.desktop.launcher import main\n"
                           "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_importing_the_engine_is_lazy_yet_complete():
    assert modules_after("import veil.engine").isdisjoint(HEAVY)
    loaded = modules_after("from veil.engine import Table, hookimpl, make_registry")
    assert "pandas" in loaded  # the names resolve to the real objects on first use


def test_registering_the_plugins_imports_no_learner_and_no_plotting():
    """Every command and the desktop's start make the registry: scikit-learn, SciPy's statistics and
    optimiser, and matplotlib come on first use (a classifier metric, a chart, a report)."""
    out = subprocess.run([sys.executable, "-c", "from veil.engine import make_registry\nr = make_registry()\n"
                          "import sys\nprint(len(r.names('metric')), ' '.join(sys.modules))"],
                         capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert int(out[0]) > 0  # the plugins did register
    loaded = set(out[1:])
    late = {"sklearn", "matplotlib", "scipy.stats", "scipy.optimize", "scipy.special"}
    assert loaded.isdisjoint(late), sorted(loaded & late)
