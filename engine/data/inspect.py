"""What ``veil inspect FILE`` prints: the data's shape and, per column, what Veil detected.

Plain aligned text, one fact per line, so that it reads well in a terminal and can be compared in
tests and scripts. Numbers are printed without thousands separators.
"""

from __future__ import annotations

import numpy as np

from ..base.errors import printable
from .binary import BinaryMatrix
from .table import FILE_LABELS, Role, Table, suggest_role

_HEADINGS = ("column", "kind", "suggested role", "distinct", "missing")
_RIGHT = {"distinct", "missing"}


def inspect_report(data, *, max_columns: int | None = None) -> str:
    """A plain-text report on a :class:`Table` or a :class:`BinaryMatrix`.

    Parameters
    ----------
    data : Table or BinaryMatrix
    max_columns : int, optional
        List at most this many columns of a table (all when omitted); a last line counts the rest.

    Returns
    -------
    str
        For a table: rows, columns, and per column its detected kind, suggested role, distinct
        values and missing values. For a binary matrix: rows, features, ones, density and whether
        labels are present.
    """
    if isinstance(data, Table):
        return _table_report(data, max_columns)
    if isinstance(data, BinaryMatrix):
        return _matrix_report(data)
    raise TypeError(f"cannot inspect a {type(data).__name__}; expected a Table or a BinaryMatrix")


def suggested_roles(table: Table) -> dict[str, Role]:
    """Each column's role: the one already set (other than insensitive), else the suggestion.

    At most one column is the target: a target already set wins, else the last suggested one (the
    class column usually comes last), as in :meth:`Table.with_suggested_roles`.
    """
    roles = {}
    for c in table.schema.columns:
        roles[c.name] = c.role if c.role is not Role.INSENSITIVE else suggest_role(c.name, table.frame[c.name], c.kind)
    targets = [n for n, r in roles.items() if r is Role.TARGET]
    keep = table.schema.target or (targets[-1] if targets else None)
    for name in targets:
        if name != keep:
            roles[name] = Role.INSENSITIVE
    return roles


def _table_report(table: Table, max_columns: int | None) -> str:
    facts = _source(table.source, table.sha256) + _read_as(table.meta)
    facts += [("rows", table.n_rows), ("columns", len(table.columns))]
    roles = suggested_roles(table)
    shown = table.schema.columns if max_columns is None else table.schema.columns[:max_columns]
    rows = []
    for c in shown:
        s = table.frame[c.name]
        rows.append((c.name, c.kind.value, roles[c.name].value, int(s.nunique(dropna=True)), int(s.isna().sum())))
    file_facts = [(k, v) for k, v in (table.meta.get("file") or {}).items() if v not in (None, "")]
    lines = _facts(facts + file_facts) + [""] + _grid(_HEADINGS, rows)
    hidden = len(table.schema.columns) - len(shown)
    if hidden:
        lines.append(f"… {hidden} more columns")
    labels = table.meta.get(FILE_LABELS) or {}
    described = [c.name for c in shown if c.name in labels]
    if described:
        lines += ["", "labels (the file's own: variable label; value labels; user-defined missing codes)"]
        for name in described:
            lines += _label_lines(name, labels[name])
    return "\n".join(lines)


def _label_lines(name: str, entry: dict, most: int = 12) -> list[str]:
    """A column's labels as ``veil inspect`` shows them: at most ``most`` value labels."""
    out = [f"{name}: {entry.get('label') or '(no variable label)'}"]
    values = list((entry.get("values") or {}).items())
    if values:
        shown = "; ".join(f"{_code(k)} = {v}" for k, v in values[:most])
        more = f"; … {len(values) - most} more" if len(values) > most else ""
        how = " (the cells show the labels)" if entry.get("coded") else ""
        out.append(f"  values{how}: {shown}{more}")
    missing = entry.get("missing") or []
    if missing:
        codes = [_code(m[0]) if m[0] == m[1] else f"{_code(m[0])} to {_code(m[1])}" for m in map(_pair, missing)]
        out.append(f"  missing codes (read as missing): {', '.join(codes)}")
    return out


def _pair(m):
    return tuple(m) if isinstance(m, (list, tuple)) else (m, m)


def _code(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return f".{v}" if isinstance(v, str) else str(v)


def _matrix_report(matrix: BinaryMatrix) -> str:
    facts = _source(matrix.meta.get("source"), matrix.meta.get("sha256")) + _read_as(matrix.meta)
    facts += [
        ("rows", matrix.n_rows),
        ("features", matrix.n_features),
        ("ones", matrix.nnz),
        ("density", f"{matrix.density:.6f}"),
        ("labels", _labels(matrix.labels)),
    ]
    return "\n".join(_facts(facts))


def _read_as(meta: dict) -> list[tuple[str, object]]:
    """How the importer read the file, when it had to choose (an item-set file read as transactions or as rows)."""
    return [("read as", meta["read_as"])] if meta.get("read_as") else []


def _labels(labels) -> str:
    if labels is None:
        return "none"
    classes = len(np.unique(labels))
    return f"present ({classes} {'class' if classes == 1 else 'classes'})"


def _source(source, sha256) -> list[tuple[str, object]]:
    facts = []
    if source:
        facts.append(("source", source))
    if sha256:
        facts.append(("sha256", sha256))
    return facts


def _facts(facts: list[tuple[str, object]]) -> list[str]:
    width = max(len(k) for k, _ in facts)
    return [f"{k.ljust(width)}  {printable(str(v))}" for k, v in facts]


def _grid(headings: tuple[str, ...], rows: list[tuple]) -> list[str]:
    cells = [list(headings)] + [[printable(str(v)) for v in r] for r in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(headings))]

    def line(row):
        parts = [v.rjust(w) if h in _RIGHT else v.ljust(w) for v, w, h in zip(row, widths, headings)]
        return "  ".join(parts).rstrip()

    return [line(r) for r in cells]
