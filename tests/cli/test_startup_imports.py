"""What a start-up loads: registering every plugin (what `veil run` and `veil verify` do first) does
not load numba, whose kernels are compiled or loaded on first use by the runs that need them."""

from __future__ import annotations

import subprocess
import sys


def test_registering_the_plugins_does_not_load_numba():
    code = (
        "import sys\n"
        "from veil.engine import make_registry\n"
        "make_registry()\n"
        "print(','.join(m for m in ('numba', 'sklearn', 'matplotlib') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_a_small_run_loads_no_sparse_matrix_learner_plotting_or_compiler(tmp_path):
    """`veil run` of global recoding on a small table without a report, as its own process: SciPy,
    scikit-learn, matplotlib and numba stay unloaded (a run that needs one loads it itself), and
    Python's cycle collector, paused while the libraries and plugins load, runs again for the work."""
    from .helpers import SMALL_CSV

    data = tmp_path / "small.csv"
    data.write_text(SMALL_CSV)
    argv = [
        "run", "--data", str(data), "--identifier", "name", "--quasi", "age_band,sex", "--model",
        "k-anonymity:k=2", "--method", "global-recoding", "--no-report", "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    code = (
        "import gc, sys\n"
        "from veil.cli.program import main\n"
        f"code = main({argv!r}, program=True)\n"
        "print(code, gc.isenabled(), gc.get_freeze_count() > 0)\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    status, loaded = out.stdout.strip().splitlines()[-2:]
    assert status == "0 True True", out.stderr
    assert "pandas" in loaded.split()  # the run did read the table
    late = {"scipy", "sklearn", "matplotlib", "numba"}
    assert late.isdisjoint(loaded.split()), sorted(late & set(loaded.split()))
