"""Column names for a headerless file, read from a file beside it: a UCI-style ``.names`` file
(C4.5 format) or a one-line header file."""

from __future__ import annotations

import os
import re

from ..base.errors import BadInput
from ..base.io import check_readable

# "age: continuous." / "workclass: Private, Self-emp-not-inc, …." (C4.5 attribute lines)
_ATTRIBUTE = re.compile(r"^\s*([^:|,]+?)\s*:\s*(.+?)\.\s*$")
CLASS_COLUMN = "class"


def read_column_names(path: str | os.PathLike) -> tuple[str, ...]:
    """The column names that ``path`` lists.

    A UCI ``.names`` file (C4.5 format: ``|`` starts a comment, the first statement lists the class
    values, then one ``name: values.`` line per attribute) gives its attributes in order followed
    by ``class``, the column C4.5 data files end with. Any other file gives the names on its first
    non-empty line, separated by commas, semicolons, tabs or ``|``.
    """
    p = check_readable(path)
    text = p.read_bytes().decode("utf-8", errors="replace")
    lines = [line.split("|", 1)[0].strip() for line in text.splitlines()]
    statements = [line for line in lines if line]
    attributes = [m.group(1) for line in statements if (m := _ATTRIBUTE.match(line))]
    if attributes:
        names = [a.strip() for a in attributes]
        if not _ATTRIBUTE.match(statements[0]):  # the class values come first in C4.5
            names.append(CLASS_COLUMN if CLASS_COLUMN not in names else f"{CLASS_COLUMN}_")
        return tuple(names)
    first = next((line for line in text.splitlines() if line.strip()), "")
    names = [n.strip().strip('"').strip("'") for n in re.split(r"[,;\t|]", first)]
    names = [n for n in names if n]
    if not names or (len(names) == 1 and len([x for x in text.splitlines() if x.strip()]) > 1):
        raise BadInput(f"{p.name} lists no column names (expected a UCI .names file or one line of names)")
    return tuple(names)
