"""The user guide in Help: the bundled text (workflow, glossary) with a section per installed
privacy model, method and metric, in their own words, and the papers cited by authors, title and
year. Offline: everything comes from resources/guide.html and the registry."""

from __future__ import annotations

from html import escape
from importlib import resources

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from veil.engine import cite

KINDS = {"models": "privacy-model", "methods": "algorithm", "metrics": "metric"}


def guide_html(registry) -> str:
    template = (resources.files("veil.resources") / "guide.html").read_text(encoding="utf-8")
    sections = {key: _plugins(registry, kind) for key, kind in KINDS.items()}
    papers = dict.fromkeys(
        cls.paper for kind in (*KINDS.values(), "chart") for cls in registry.classes(kind) if cls.paper
    )
    sections["papers"] = "<ul>" + "".join(f"<li>{escape(cite(p, full=True))}</li>" for p in papers) + "</ul>"
    return template % sections


def _plugins(registry, kind: str) -> str:
    items = []
    for cls in registry.classes(kind):
        source = f" <i>({escape(cite(cls.paper))})</i>" if cls.paper else ""
        text = escape(cls.description or "")
        items.append(
            f"<dt><b>{escape(cls.title or cls.name)}</b> <code>{escape(cls.name)}</code>{source}</dt><dd>{text}</dd>"
        )
    return "<dl>" + "".join(items) + "</dl>"


class GuideDialog(QDialog):
    def __init__(self, registry, parent=None):
        super().__init__(parent)
        self.setObjectName("user-guide")
        self.setWindowTitle("Veil user guide")
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(False)
        self.browser.setHtml(guide_html(registry))
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(760, 640)
