"""Check, before setting up, that this machine can run Veil; say what to install if not.

Run by `make setup` (and so `make run` / `make test`): exits 2 with an apt-get line when something
essential is missing. `make run` runs it again with ``--window``: a real window on X11 also needs the
xcb libraries of Qt's xcb plugin (without them Qt aborts with "xcb-cursor0 or libxcb-cursor0 is
needed"); without ``--window`` their absence is only a warning, since the tests and every command
but the bare ``veil`` run offscreen.
"""

from __future__ import annotations

import ctypes.util
import shutil
import sys

QT_LIBS = {  # shared library -> Debian/Ubuntu package (see README "System packages")
    "EGL": "libegl1",
    "GL": "libgl1",
    "xkbcommon": "libxkbcommon0",
    "fontconfig": "libfontconfig1",
    "freetype": "libfreetype6",
    "glib-2.0": "libglib2.0-0",
    "dbus-1": "libdbus-1-3",
    "X11": "libx11-6",
}
WINDOW_LIBS = {  # what Qt's xcb platform plugin loads for a real window on X11
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-image": "libxcb-image0",
    "xcb-keysyms": "libxcb-keysyms1",
    "xcb-randr": "libxcb-randr0",
    "xcb-render-util": "libxcb-render-util0",
    "xcb-render": "libxcb-render0",
    "xcb-shape": "libxcb-shape0",
    "xcb-shm": "libxcb-shm0",
    "xcb-sync": "libxcb-sync1",
    "xcb-util": "libxcb-util1",
    "xcb-xfixes": "libxcb-xfixes0",
    "xcb-xkb": "libxcb-xkb1",
    "X11-xcb": "libx11-xcb1",
    "xcb": "libxcb1",
}
INSTALL = "sudo apt-get install -y --no-install-recommends"


def missing(libs: dict[str, str], find=ctypes.util.find_library) -> list[str]:
    """The packages of the libraries in ``libs`` that the dynamic loader cannot find."""
    return [pkg for lib, pkg in libs.items() if find(lib) is None]


def window_check(window: bool, find=ctypes.util.find_library) -> int:
    """Say what a real window still needs; with ``window`` that is an error (exit 2)."""
    if not sys.platform.startswith("linux"):
        return 0
    packages = missing(WINDOW_LIBS, find)
    if not packages:
        return 0
    word = "veil setup" if window else "veil setup: warning"
    print(
        f"{word}: a window on X11 needs {', '.join(packages)} (the tests and the command line do not)", file=sys.stderr
    )
    print(f"{word}: install them with: {INSTALL} {' '.join(packages)}", file=sys.stderr)
    return 2 if window else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    problems, packages = [], []
    if sys.version_info < (3, 11):  # noqa: UP036  (this runs on the system Python, before the venv)
        problems.append(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError:
        problems.append("Python's venv module is missing")
        packages.append("python3-venv")
    if sys.platform.startswith("linux"):
        for lib, pkg in QT_LIBS.items():
            if ctypes.util.find_library(lib) is None:
                problems.append(f"the library lib{lib} (Qt needs it) is missing")
                packages.append(pkg)
        if shutil.which("gcc") is None:
            problems.append("a C compiler is needed to build the pyfim itemset miner")
            packages += ["gcc", "libc6-dev", "python3-dev"]
        if shutil.which("java") is None:
            print(
                f"warning: no Java found; runs on Spark (executor=spark) and their tests need Java 17 or newer: "
                f"{INSTALL} openjdk-17-jre-headless",
                file=sys.stderr,
            )
        if shutil.which("fc-list") is not None:
            import subprocess

            fonts = subprocess.run(["fc-list"], capture_output=True, text=True).stdout
            if not fonts.strip():
                print(
                    "warning: no fonts found; Qt will draw text as boxes (install fonts-dejavu-core)", file=sys.stderr
                )
    if problems:
        for p in problems:
            print(f"veil setup: {p}", file=sys.stderr)
        if packages:
            print(f"veil setup: install them with: {INSTALL} {' '.join(dict.fromkeys(packages))}", file=sys.stderr)
        return 2
    return window_check("--window" in argv)


if __name__ == "__main__":
    sys.exit(main())
