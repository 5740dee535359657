"""Capabilities, never names (docs/design.md, "Capabilities, never names"): no registered plugin's name
appears as a string literal in engine/ or desktop/. The core asks what a plugin declares (its roles,
the kinds of privacy judgement it makes or satisfies, its ranker, ``in_report``, ``preferred`` …)
instead of recognising it.

A literal counts when it *is* a plugin's name or a plugin call (``"k-anonymity"``,
``"k-anonymity:k=5"``), in code or in the constant parts of an f-string; docstrings and prose that
mentions a name among other words (help text such as "e.g. k-anonymity:k=5") do not.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from veil.engine import make_registry

ROOT = Path(__file__).resolve().parents[1]
REGISTRY = make_registry()
NAMES = {i.cls.name: i.cls.kind for i in REGISTRY.all()}

# Words that name a concept of the engine and, by coincidence, also a plugin. Each says which.
CONCEPTS = {
    "transactions": "a data form an algorithm accepts (engine/plugin.py TRANSACTIONS)",
}


def _docstrings(tree) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def named_plugins(source: str) -> list[tuple[int, str]]:
    """(line, name) of every string literal in ``source`` that is a plugin's name or call."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value.strip()
            name = text.split(":", 1)[0]
            if name in NAMES and name not in CONCEPTS and (text == name or ":" in text and "=" in text):
                found.append((node.lineno, name))
    return found


def test_the_check_finds_a_name_where_there_is_one():
    assert named_plugins('x = "k-anonymity"\ny = f"{a}"\n') == [(1, "k-anonymity")]
    assert named_plugins('def f():\n    """k-anonymity is mentioned."""\n    return "k-ac:k=5"\n') == [(3, "k-ac")]
    assert named_plugins('help = "e.g. k-anonymity:k=5, or none"\n') == []


def test_concept_words_are_still_plugin_names():
    """An exemption that no longer names a plugin must go."""
    assert set(CONCEPTS) <= set(NAMES)


@pytest.mark.parametrize("folder", ["engine", "desktop"])
def test_no_plugin_is_named_in(folder):
    hits = [
        f"{path.relative_to(ROOT)}:{line} names {NAMES[name]} {name!r}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, name in named_plugins(path.read_text(encoding="utf-8"))
    ]
    assert hits == []
