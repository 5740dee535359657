"""The engine's structure (docs/design.md): no import circle between its modules, counting the
imports inside functions too (a lazy import must not hide one), and no environment variable read
beyond the user settings docs/ lists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"

# The user settings docs/guide.md lists (and nothing else in engine/ reads the environment).
USER_SETTINGS = {
    "VEIL_SETTINGS_DIR",
    "VEIL_CACHE_DIR",
    "XDG_CACHE_HOME",
    "LOCALAPPDATA",
    "XDG_CONFIG_HOME",
    "APPDATA",
    "VEIL_PLUGINS",
}


def module_name(path: Path, root: Path = ENGINE, package: str = "veil.engine") -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def engine_imports(root: Path = ENGINE, package: str = "veil.engine") -> dict[str, set[str]]:
    """Module -> the engine modules it imports anywhere in its source (functions included)."""
    modules = {module_name(p, root, package): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                    base = f"{base}.{node.module}" if node.module else base
                else:
                    base = node.module or ""
                candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            targets.update(c for c in candidates if c in modules and c != name)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package_edges_removed(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """A package's ``__init__`` only names its modules (lazily); importing ``pkg.mod`` runs it
    first, which is no circle of code. Keep the edges between modules."""
    packages = {m for m in graph if (ENGINE / Path(*m.split(".")[2:]) / "__init__.py").exists()}
    return {m: {t for t in ts if t not in packages} for m, ts in graph.items() if m not in packages}


def test_no_import_circle_inside_the_engine():
    assert circles(package_edges_removed(engine_imports())) == []


def test_the_circle_finder_finds_a_circle(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n")
    (tmp_path / "b.py").write_text("from .a import f\n")
    (tmp_path / "c.py").write_text("from .a import f\n")
    assert circles(engine_imports(tmp_path, "pkg")) == [["pkg.a", "pkg.b"]]


ENV_READ = re.compile(r"""(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\(\s*|environ\.get\(\s*)["']([A-Z0-9_]+)["']""")


def environment_reads(root: Path = ENGINE) -> dict[str, set[str]]:
    reads: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        for name in ENV_READ.findall(path.read_text(encoding="utf-8")):
            reads.setdefault(name, set()).add(str(path.relative_to(root)))
    return reads


def test_the_engine_reads_only_documented_user_settings():
    unexpected = {k: v for k, v in environment_reads().items() if k not in USER_SETTINGS}
    assert unexpected == {}


def test_every_user_setting_is_documented():
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    assert [s for s in sorted(USER_SETTINGS) if s not in guide] == []


def test_the_environment_reader_finds_a_read(tmp_path):
    (tmp_path / "m.py").write_text('import os\nx = os.environ.get("VEIL_DFS_MASKS", "1")\n')
    assert environment_reads(tmp_path) == {"VEIL_DFS_MASKS": {"m.py"}}


def test_a_public_name_spelled_like_its_module_is_the_name_whatever_was_imported_first():
    """``veil.engine.suda`` is the function of ``model/suda.py``, after its class ``Suda`` (which
    imports the module) or the module itself was imported first."""
    import subprocess
    import sys

    script = (
        "import types\n"
        "from veil.engine import Suda\n"
        "from veil.engine import suda\n"
        "from veil.engine.model import suda as layer_suda\n"
        "assert not isinstance(suda, types.ModuleType) and suda is layer_suda, suda\n"
        "import veil.engine.model.suda, veil.engine as e\n"
        "del e.suda\n"  # resolved afresh: the layer now holds the module under that name
        "from veil.engine import suda as again\n"
        "assert again is suda, again\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
