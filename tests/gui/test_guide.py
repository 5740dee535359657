"""Help ▸ User guide is inside the app (offline): the workflow, every installed
privacy model and method in its own words, a glossary, and papers by authors, title and year."""

from __future__ import annotations

import re

from veil.engine import cite
from veil.engine.base.papers import PAPERS


def test_the_guide_covers_workflow_plugins_and_glossary(demo_window, registry):
    dialog = demo_window.actions.show_guide()
    assert demo_window.actions.guide.shortcut().toString()  # F1 (or the platform's help key)
    text = dialog.browser.toPlainText()
    for words in (
        "The workflow",
        "Task: release a table with hierarchies, step by step",
        "Task: choose between methods",
        "Task: read the report",
        "Glossary",
        "k-anonymity",
        "k-AC",
        "l-diversity",
        "t-closeness",
        "NCP",
        "PBI",
        "E(S)",
        "ε (epsilon)",
    ):
        assert words in text, words
    for kind in ("privacy-model", "algorithm", "metric"):
        for cls in registry.classes(kind):
            assert (cls.title or cls.name) in text, cls.name
    assert "Zhang et al. (2017)" in text and "On the Tradeoff Between Privacy and Utility" in text
    assert not re.search(r"\b00\d_[0-9a-f]{16}\b", text)  # never a file name or a hash
    dialog.close()


def test_every_built_in_paper_is_cited_by_authors_title_and_year(registry):
    for cls in (c for kind in ("algorithm", "privacy-model", "metric", "chart") for c in registry.classes(kind)):
        if cls.paper:
            assert cls.paper in PAPERS, cls.name
            text = cite(cls.paper)
            assert re.search(r"\(\d{4}\)", text) and PAPERS[cls.paper].title in text


def test_veil_plugins_names_papers_not_hashes(capsys):
    from veil.cli import main

    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "[paper " not in out and not re.search(r"\b00\d_[0-9a-f]{16}\b", out)
    assert "Zhang et al. (2017)" in out
