"""Time to the desktop's window: `veil --demo` started as a process, offscreen,
until its main window paints for the first time, against a bare PySide6 window painted the same
way and against `python -c pass` (process start-up included in all three); and until the demo
data is in the window (the panels built, the data read and shown). Also where the time goes inside
Veil's start (`-X importtime` of the window's modules).

Run: ``make benchmark`` or ``.venv/bin/python benchmarks/bench_window.py`` (markdown).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench import markdown_table  # noqa: E402

pytestmark = pytest.mark.benchmark

# Prints "painted" at the first paint of any widget of a shown top-level window, then quits
# (with UNTIL_DATA: once the main window's controller has shown the data, then quits).
WATCH = """
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
UNTIL_DATA = False

def done():
    import time
    print("painted", time.process_time(), flush=True)
    QTimer.singleShot(0, QApplication.instance().quit)

class Watch(QObject):
    done = False
    def eventFilter(self, obj, event):
        if not Watch.done and event.type() == QEvent.Type.Paint and obj.isWidgetType() and obj.window().isVisible():
            Watch.done = True
            if UNTIL_DATA:
                window = obj.window()
                if getattr(window, "controller", None) is not None:  # a window built with its panels
                    window.controller.data_loaded.connect(done)
                else:
                    window.attached.connect(lambda: window.controller.data_loaded.connect(done))
            else:
                done()
        return False

WATCHER = Watch()
"""

VEIL = (
    WATCH
    + """
from veil.desktop import app as desktop_app
real_create = desktop_app.create_app
def create_app(*args, **kwargs):
    app = real_create(*args, **kwargs)
    app.installEventFilter(WATCHER)
    return app
desktop_app.create_app = create_app
from veil.desktop.launcher import main  # what `veil --demo` runs
sys.exit(main(["--demo"]))
"""
)
# the installed `veil` script (a Python file), else the same entry point as a module
VEIL_COMMAND = (
    [str(Path(sys.executable).with_name("veil"))]
    if Path(sys.executable).with_name("veil").is_file()
    else ["-m", "veil.desktop"]
)
VEIL_DATA = VEIL.replace("UNTIL_DATA = False", "UNTIL_DATA = True")

BARE = (
    WATCH
    + """
from PySide6.QtWidgets import QMainWindow, QLabel
app = QApplication([sys.argv[0]])
app.installEventFilter(WATCHER)
window = QMainWindow()
window.setCentralWidget(QLabel("hello"))
window.resize(1200, 800)
window.show()
sys.exit(app.exec())
"""
)


def _env(settings: str) -> dict:
    """Offscreen, fresh settings, and Python's bytecode cache on (as an installed Veil has it: with
    PYTHONDONTWRITEBYTECODE set every start compiles Veil's modules again, about a second more)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "QT_QPA_PLATFORM": "offscreen", "VEIL_SETTINGS_DIR": settings}


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_to_paint(code: str, settings: str) -> tuple[float, float, float]:
    """Seconds from starting the process until it prints "painted" (the window's first paint, or
    the data shown), and the CPU seconds (user + system) of the whole process, which paints and then
    quits at once: what the wall time would be on an idle machine, and far steadier than it under
    load. (The settings folder is shared: every start after the first finds the session the last
    one kept, which was the demo data; `--demo` opens the demo data anyway.)"""
    cpu = _cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(settings)
    )
    for line in process.stdout:
        if line.startswith("painted"):
            elapsed = time.perf_counter() - started
            at_paint = float(line.split()[1])
            break
    else:
        raise RuntimeError(f"the window never painted: {process.stderr.read()[-2000:]}")
    process.wait(timeout=120)
    return elapsed, _cpu() - cpu, at_paint


def time_to_exit(argv: list[str]) -> tuple[float, float, float]:
    cpu = _cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, capture_output=True, env=_env(tempfile.gettempdir()))
    spent = _cpu() - cpu
    return time.perf_counter() - started, spent, spent


def measure(repeats: int = 5) -> dict[str, tuple[float, float, float]]:
    """Median seconds of each, the three timed in turn within every repetition (after a warm-up)."""
    import statistics

    with tempfile.TemporaryDirectory(prefix="veil-window-") as settings:
        candidates = {
            "python -c pass": lambda: time_to_exit(["-c", "pass"]),
            "bare PySide6 window, first paint": lambda: time_to_paint(BARE, settings),
            "veil --demo, first paint": lambda: time_to_paint(VEIL, settings),
            "veil --demo, the demo data shown": lambda: time_to_paint(VEIL_DATA, settings),
            "veil --help": lambda: time_to_exit([*VEIL_COMMAND, "--help"]),
        }
        for run in candidates.values():
            run()
        samples = {name: [] for name in candidates}
        for _ in range(repeats):
            for name, run in candidates.items():
                samples[name].append(run())
    return {name: tuple(statistics.median(x[i] for x in s) for i in range(3)) for name, s in samples.items()}


def heaviest_imports(limit: int = 12) -> list[tuple[str, float]]:
    """The window's modules imported with ``-X importtime``: the largest cumulative times (s)."""
    code = "import veil.desktop.app, veil.engine; veil.engine.make_registry()"
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=_env(tempfile.gettempdir()),
    ).stderr
    rows = []
    for line in err.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = (p.strip() for p in line.split(":", 1)[1].split("|"))
            if (
                cumulative.isdigit()
                and name.split(".")[0]
                in ("veil", "PySide6", "pandas", "numpy", "scipy", "sklearn", "matplotlib", "pyarrow")
                and "." not in name.strip()
            ):
                rows.append((name.strip(), int(cumulative) / 1e6))
    return sorted(rows, key=lambda r: -r[1])[:limit]


def report(measured: dict[str, tuple[float, float, float]], imports) -> str:
    times = {k: w for k, (w, _, _) in measured.items()}
    base = times["python -c pass"]
    out = [
        markdown_table(
            ["to", "median wall s", "× python -c pass", "median CPU s until then", "median CPU s of the process"],
            [
                [k, f"{v:.3f}", f"{v / base:.1f}", f"{measured[k][2]:.3f}", f"{measured[k][1]:.3f}"]
                for k, v in times.items()
            ],
        )
    ]
    veil, bare = times["veil --demo, first paint"], times["bare PySide6 window, first paint"]
    cpu_veil, cpu_bare = measured["veil --demo, first paint"][2], measured["bare PySide6 window, first paint"][2]
    out.append(
        f"Veil's window paints after {veil / bare:.2f}× the time of a bare PySide6 window ({veil - bare:.2f} s "
        f"more), having used {cpu_veil / cpu_bare:.2f}× its CPU."
    )
    if imports:
        out.append(
            markdown_table(
                ["top-level package the desktop imports (after its first paint)", "cumulative import s"],
                [[n, f"{s:.3f}"] for n, s in imports],
            )
        )
    return "\n\n".join(out)


def test_time_to_window():
    measured = measure()
    print("\n" + report(measured, heaviest_imports()))
    # the target (< 1.5 s on an idle machine; docs/benchmarks.md (l)): reported, not asserted


if __name__ == "__main__":
    print(report(measure(), heaviest_imports()))
