"""The import graph of the whole tree (docs/design.md, "Packages and layers"): no import circle
between any modules of engine/, plugins/, desktop/ and cli/ (a package's ``__init__`` counts as a
module), counting the imports inside functions (a lazy import must not hide one) and resolving
relative imports; and every registered
plugin module is a leaf, importing no other registered plugin module, with import-linter's
"plugin modules are independent" contract naming exactly the modules of the entry points."""

from __future__ import annotations

import ast
import functools
import tomllib
from collections.abc import Collection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"engine": "veil.engine", "plugins": "veil.plugins", "desktop": "veil.desktop", "cli": "veil.cli"}


def module_name(path: Path, root: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def source_modules(folders: dict[Path, str]) -> dict[str, Path]:
    """Module name -> its file, for every ``.py`` under each folder (mapped to its package)."""
    return {module_name(p, root, package): p for root, package in folders.items() for p in sorted(root.rglob("*.py"))}


def imported_names(name: str, path: Path, modules: Collection[str] = ()) -> set[str]:
    """Every dotted name ``path`` imports anywhere in its source, relative imports resolved; for
    ``from a import b`` both ``a`` and ``a.b`` (``b`` may be a module), but only ``a.b`` when every name
    is a module of ``modules`` (``from . import run`` imports the module ``run``, as ``import a.b``
    imports ``a.b``: the package itself is already initialised as its parent)."""
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            submodules = {f"{base}.{alias.name}" for alias in node.names}
            if not submodules <= set(modules):
                names.add(base)
            names.update(submodules)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def import_graph(folders: dict[Path, str]) -> dict[str, set[str]]:
    """Module -> the modules of the tree it imports anywhere in its source (functions included)."""
    modules = source_modules(folders)
    return {
        name: {m for m in imported_names(name, path, modules) if m in modules and m != name}
        for name, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return found


def a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One closed path through ``component`` (to name the circle when the test fails)."""
    members = set(component)
    start = component[0]
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [*reversed(path), start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    return component


@functools.cache
def tree() -> tuple[dict[str, set[str]], dict[str, Path]]:
    folders = {ROOT / folder: package for folder, package in FOLDERS.items()}
    return import_graph(folders), source_modules(folders)


def test_no_import_circle_in_the_whole_tree():
    graph, _ = tree()
    found = [" -> ".join(a_cycle(graph, c)) for c in circles(graph)]
    assert found == [], "import circles:\n" + "\n".join(found)


def test_the_circle_finder_finds_a_circle_through_a_function_and_a_relative_import(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n")
    (tmp_path / "b.py").write_text("from .sub.c import h\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "sub" / "c.py").write_text("from ..a import f\n")
    (tmp_path / "d.py").write_text("from .a import f\n")
    folders = {tmp_path: "pkg"}
    graph = import_graph(folders)
    assert circles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert a_cycle(graph, ["pkg.a", "pkg.b", "pkg.sub.c"]) == ["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]


def entry_point_modules() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(project["project"]["entry-points"]["veil"].values())


def test_every_registered_plugin_module_is_a_leaf():
    graph, _ = tree()
    plugins = entry_point_modules()
    assert plugins <= set(graph), sorted(plugins - set(graph))
    imports = {p: sorted(graph[p] & plugins) for p in sorted(plugins) if graph[p] & plugins}
    assert imports == {}


def test_no_private_plugin_module_imports_a_registered_one():
    """Shared code lives in underscored modules, which serve the plugins and never lean on one."""
    graph, _ = tree()
    plugins = entry_point_modules()
    shared = [m for m in graph if m.startswith("veil.plugins.") and m not in plugins]
    imports = {m: sorted(graph[m] & plugins) for m in sorted(shared) if graph[m] & plugins}
    assert imports == {}


def test_the_independence_contract_names_every_registered_plugin_module():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    independent = [c for c in contracts if c["name"] == "plugin modules are independent"]
    assert len(independent) == 1 and independent[0]["type"] == "independence"
    assert sorted(independent[0]["modules"]) == sorted(entry_point_modules())


def loads_plugins(source: str) -> list[str]:
    """The calls in ``source`` that could load a plugin around the imports: reading the entry
    points, or importing a module by its name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("entry_points", "import_module", "__import__"):
                found.append(f"{name} (line {node.lineno})")
    return found


def test_no_plugin_module_loads_another_by_name():
    """A plugin reaches shared code through its area's underscored modules, never by finding another
    plugin among the entry points (only the engine's registry loads plugins)."""
    _, files = tree()
    loading = {
        m: loads_plugins(p.read_text(encoding="utf-8")) for m, p in files.items() if m.startswith("veil.plugins")
    }
    assert {m: calls for m, calls in loading.items() if calls} == {}


def test_the_loading_finder_sees_an_entry_point_lookup():
    source = "import importlib.metadata\ndef f():\n    return importlib.metadata.entry_points(group='veil')\n"
    assert loads_plugins(source) == ["entry_points (line 3)"]
    assert loads_plugins("from importlib import import_module\nimport_module('x')\n") == ["import_module (line 2)"]
