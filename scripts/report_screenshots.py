"""Make docs/screenshots/report-html.png and report-pdf.png from a demo export.

    .venv/bin/python scripts/report_screenshots.py

Exports Greedy-HamDist under k-anonymity (k = 5) on the bundled demo data with ``veil run``, then
renders the report with headless Chromium (``apt-get install chromium``) and the PDF's first page
with pdftoppm (``apt-get install poppler-utils``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from veil.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "docs" / "screenshots"


def _need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        sys.exit(f"{tool} is not installed (see this script's docstring)")
    return path


def run() -> None:
    chromium, pdftoppm = _need("chromium"), _need("pdftoppm")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "export"
        code = main(
            [
                "run",
                "--demo",
                "--method",
                "greedy-hamdist",
                "--model",
                "k-anonymity:k=5",
                "--seed",
                "3",
                "--out",
                str(out),
            ]
        )
        if code:
            sys.exit(f"veil run failed with exit code {code}")
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--screenshot={SHOTS / 'report-html.png'}",
                "--window-size=1100,1900",
                (out / "report.html").as_uri(),
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [
                pdftoppm,
                "-r",
                "90",
                "-png",
                "-f",
                "1",
                "-l",
                "1",
                "-singlefile",
                str(out / "report.pdf"),
                str(SHOTS / "report-pdf"),
            ],
            check=True,
        )
    print(SHOTS / "report-html.png")
    print(SHOTS / "report-pdf.png")


if __name__ == "__main__":
    run()
