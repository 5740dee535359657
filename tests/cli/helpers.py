"""Helpers of the command-line tests: small data files, outcomes of a ``veil`` call, checks."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Twelve records; every (age_band, sex) pair occurs twice, so 2-anonymity holds on those
# quasi-identifiers, while the postcode makes every record unique once it counts as one.
SMALL_CSV = """\
name,age_band,sex,postcode,smoker,outcome
Ann,20-29,F,LS6,0,1
Bob,20-29,F,LS7,1,0
Cid,20-29,M,HD4,0,0
Dee,20-29,M,HD5,1,1
Eve,30-39,F,WN5,0,0
Fay,30-39,F,WN6,0,1
Gus,30-39,M,LS1,1,0
Hal,30-39,M,LS2,0,1
Ida,40-49,F,HD1,1,1
Jon,40-49,F,HD2,0,0
Kim,40-49,M,WN1,1,0
Lou,40-49,M,WN2,0,1
"""
SMALL_QUASI = ["age_band", "sex"]
SMALL_ROWS = 12

# Six records, four columns, no header.
HEADERLESS_CSV = """\
1,0,3.5,0
0,1,2.0,1
1,1,4.25,0
0,0,1.0,1
1,0,3.5,1
0,1,2.0,0
"""


@dataclass(frozen=True)
class Outcome:
    """What one ``veil`` invocation did."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def all_files(folder: Path) -> list[Path]:
    """Every file below ``folder`` (hidden ones included), or [] when it does not exist."""
    folder = Path(folder)
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def assert_bad_input(result: Outcome) -> None:
    """Exit 2, exactly one non-empty line on stderr, no traceback anywhere."""
    assert result.code == 2, (result.code, result.out, result.err)
    assert len(result.err_lines) == 1, result.err
    assert result.err.startswith("veil: error: ") and result.err_lines[0][len("veil: error: ") :].strip(), result.err
    assert "Traceback" not in result.out + result.err


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))


def demo_columns(schema: dict, *roles: str) -> list[str]:
    """Names of the demo's columns with one of ``roles``, in file order."""
    return [c["name"] for c in schema["columns"] if c["role"] in roles]
