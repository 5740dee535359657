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
