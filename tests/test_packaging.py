"""pyproject.toml builds without setuptools' deprecation warnings: the licence as an SPDX string
with a setuptools that reads it, and every folder holding files listed as a package (a folder
shipped as data of its parent is a warning on every install)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_licence_is_an_spdx_string_with_a_setuptools_that_reads_it():
    assert isinstance(PYPROJECT["project"]["license"], str)
    floor = next(r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools"))
    assert tuple(int(x) for x in re.search(r">=\s*([\d.]+)", floor)[1].split(".")) >= (77,)


def test_every_folder_with_files_is_a_listed_package():
    setup = PYPROJECT["tool"]["setuptools"]
    packages = set(setup["packages"])
    for package, folder in setup["package-dir"].items():
        for path in (ROOT / folder).rglob("*"):
            if not path.is_dir() or path.name == "__pycache__" or not any(p.is_file() for p in path.iterdir()):
                continue
            if any(p.is_file() and p.suffix == ".py" for p in path.iterdir()) or package == "veil.resources":
                name = ".".join([package, *path.relative_to(ROOT / folder).parts])
                if path.name == "icons":  # icons/* is package data of veil.resources, holding no module
                    continue
                assert name in packages, f"{path.relative_to(ROOT)} is not listed in [tool.setuptools] packages"
