"""Dialogs: importing a file (with a preview), exporting a release, errors with details on
demand, About (plugins and versions) and Plugins (including those that failed to load).

Dialogs open window-modal with ``open()`` rather than ``exec()``: the event loop keeps running
(runs keep reporting progress) and tests can fill a dialog in and accept it."""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from veil.engine import (
    BadInput,
    ExportOptions,
    ImportOptions,
    IntoTable,
    Table,
    __version__,
    classifier_skipped,
    read_column_names,
)

from .state import tasks
from .models import PluginsModel, TableModel
from .widgets import ErrorLabel, fast_table, fit_columns, muted

DETECT = "Detect"
DELIMITERS = (
    (DETECT, None),
    ("Comma  ,", ","),
    ("Semicolon  ;", ";"),
    ("Tab", "\t"),
    ("Pipe  |", "|"),
    ("Spaces", " "),
)
ENCODINGS = (DETECT, "utf-8", "utf-8-sig", "cp1252", "latin-1", "utf-16")
HEADERS = ((DETECT, None), ("First row names the columns", True), ("No header row (col1, col2, …)", False))
PREVIEW_ROWS = 200


def show_error(parent: QWidget, title: str, message: str, details: str = "") -> QMessageBox:
    """A warning that says what went wrong and what to do; the traceback only on demand."""
    box = QMessageBox(QMessageBox.Warning, title, message[:1].upper() + message[1:], QMessageBox.Ok, parent)
    box.setObjectName("veil-error")
    if details:
        box.setDetailedText(details)
    box.setAttribute(Qt.WA_DeleteOnClose)
    box.open()
    return box


class RunDetailsDialog(QDialog):
    """Everything about one run (done, failed or cancelled), as text that can be copied."""

    def __init__(self, title: str, text: str, parent=None):
        super().__init__(parent)
        self.setObjectName("run-details")
        self.setWindowTitle(title)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(640, 420)


def file_filter(registry) -> str:
    """ "Data files (…);;CSV (…);;…" from every importer's extensions, plus project files."""
    groups, every = [], []
    for cls in registry.classes("importer"):
        pats = " ".join(f"*{e}" for e in cls.extensions)
        every += [f"*{e}" for e in cls.extensions]
        groups.append(f"{cls.title or cls.name} ({pats})")
    every = " ".join(dict.fromkeys(every))
    return ";;".join([f"Data files ({every})", *groups, "All files (*)"])


def short_verdict(outcome) -> str:
    """A run's verdict in a few words: each privacy model's, when the release had to satisfy several
    ("k-anonymity holds, l-diversity holds"), else the first clause of its message."""
    verdicts = getattr(getattr(outcome, "result", None), "verdicts", None) or ()
    if len(verdicts) > 1:
        return ", ".join(f"{v.model} {'holds' if v.holds else 'fails'}" for v in verdicts)
    return outcome.verdict.split(";")[0]


# what to do with missing values: the import dialog's choices, and the question asked after opening
MISSING_CHOICES = (
    ("Keep them (methods refuse them)", None),
    ("Drop the records holding one", "drop"),
    ("Treat a blank as a value of its own", "value"),
    ("Impute: the median, or the most frequent value", "impute"),
)
FILLS = ("value", "impute")
MISSING_BUTTONS = (("Drop those records", "drop"), ("Keep as a value", "value"), ("Impute", "impute"))


class ImportDialog(QDialog):
    """How to read a file: format, delimiter, encoding, header (and sheet), with a live preview of
    the first rows read exactly as the whole file will be."""

    def __init__(self, registry, path: str | Path, parent=None):
        super().__init__(parent)
        self.registry, self.path = registry, Path(path)
        self.setWindowTitle(f"Open {self.path.name}")
        self.setObjectName("import-dialog")
        self.fmt = QComboBox()
        self.fmt.addItem(DETECT, None)
        for cls in registry.classes("importer"):
            self.fmt.addItem(cls.title or cls.name, cls.name)
        self.delimiter = QComboBox()
        for label, value in DELIMITERS:
            self.delimiter.addItem(label, value)
        self.encoding = QComboBox()
        self.encoding.setEditable(True)
        self.encoding.addItems(ENCODINGS)
        self.header = QComboBox()
        for label, value in HEADERS:
            self.header.addItem(label, value)
        self.sheet = QLineEdit(placeholderText="the first sheet, or a database's only table")
        self.sheet.setToolTip("An Excel sheet, an R file's data frame or an SQLite database's table")
        self.query = QLineEdit(placeholderText="SELECT … (an SQLite database's rows; read-only)")
        self.query.setObjectName("import-query")
        self.skip_rows = QSpinBox(minimum=0, maximum=10_000)
        self.skip_rows.setToolTip(
            "Lines to skip at the top before anything is read (a title line, like the one that opens UCI's adult.test)"
        )
        self.names = QLineEdit(placeholderText="comma-separated, for a file without a header row")
        self.names.setObjectName("import-names")
        self.names_button = QPushButton("From file…")
        self.names_button.setToolTip("Read the names from a UCI .names file or a one-line header file")
        self.names_button.clicked.connect(self.choose_names_file)
        self.missing = QComboBox()
        self.missing.setObjectName("import-missing")
        for label, value in MISSING_CHOICES:
            self.missing.addItem(label, value)
        self.missing.setToolTip(
            "A missing value is an empty cell or “?”. Anonymisation methods cannot place one "
            "in a group; the papers drop such records (Adult: 30,162 of 32,561). When the file "
            "has some, Veil asks after opening it. The manifest records the choice."
        )
        names_row = QHBoxLayout()
        names_row.addWidget(self.names, 1)
        names_row.addWidget(self.names_button)
        form = QFormLayout()
        form.addRow("Format", self.fmt)
        form.addRow("Delimiter", self.delimiter)
        form.addRow("Encoding", self.encoding)
        form.addRow("Header", self.header)
        form.addRow("Skip rows", self.skip_rows)
        form.addRow("Column names", names_row)
        self.names_source = muted("")
        self.names_source.setObjectName("import-names-source")
        self.names_source.hide()
        self.names.textEdited.connect(lambda _: self.names_source.hide())  # the user's own names now
        form.addRow("", self.names_source)
        form.addRow("Sheet or table", self.sheet)
        form.addRow("Query", self.query)
        form.addRow("Missing values", self.missing)
        self.preview_model = TableModel()
        self.preview_view = fast_table(QTableView(), stretch_last=False)
        self.preview_view.setModel(self.preview_model)
        self.preview_note = muted("")
        self.problem = ErrorLabel()
        buttons = QDialogButtonBox(QDialogButtonBox.Open | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.open_button = buttons.button(QDialogButtonBox.Open)
        layout = QVBoxLayout(self)
        layout.addWidget(muted(str(self.path)))
        layout.addLayout(form)
        layout.addWidget(self.preview_note)
        layout.addWidget(self.preview_view, 1)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(820, 520)
        self.text = tasks.is_text_file(self.path)
        for combo in (self.fmt, self.delimiter, self.header):
            combo.currentIndexChanged.connect(self.refresh)
        self.encoding.currentTextChanged.connect(self.refresh)
        self.sheet.editingFinished.connect(self.refresh)
        self.query.editingFinished.connect(self.refresh)
        self.names.editingFinished.connect(self.refresh)
        self.skip_rows.valueChanged.connect(self.refresh)
        self.refresh()
        self.suggest_names()

    def suggest_names(self) -> None:
        """A headerless text file beside a UCI ``.names`` file of its stem (adult.data and adult.test
        beside adult.names) takes its column names from it when their number fits; a note says so."""
        sibling = self.path.with_suffix(".names")
        if not self.text or sibling == self.path or not sibling.is_file() or self.names.text().strip():
            return
        try:
            names = read_column_names(sibling)
            plain = tasks.preview(self.registry, self.path, self.options())
        except (BadInput, OSError):
            return
        if (
            not isinstance(plain, Table)
            or len(names) != len(plain.columns)
            or plain.columns != [f"col{i + 1}" for i in range(len(plain.columns))]
        ):
            return  # the file names its columns, or the names do not fit
        self.names.setText(", ".join(names))
        self.names.setCursorPosition(0)  # show the first names
        self.refresh()
        self.names_source.setText(f"From {sibling.name}, beside the file (clear the field for col1, col2, …).")
        self.names_source.show()

    def options(self) -> ImportOptions:
        enc = self.encoding.currentText().strip()
        names = tuple(n.strip() for n in self.names.text().split(",") if n.strip()) or None
        return ImportOptions(
            encoding=None if enc in ("", DETECT) else enc,
            delimiter=self.delimiter.currentData(),
            header=self.header.currentData(),
            names=names,
            sheet=self.sheet.text().strip() or None,
            query=self.query.text().strip() or None,
            fmt=self.fmt.currentData(),
            skip_rows=self.skip_rows.value() if self.text else 0,
            drop_missing=self.missing.currentData() == "drop",
            fill_missing=self.missing.currentData() if self.missing.currentData() in FILLS else None,
        )

    def choose_names_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Column names from",
            str(self.path.parent),
            "Names files (*.names *.txt *.csv *.header);;All files (*)",
        )
        if path:
            self.use_names_file(path)

    def use_names_file(self, path: str | Path) -> None:
        """Fill the names field from a UCI .names file or a one-line header file."""
        try:
            names = read_column_names(path)
        except (BadInput, OSError) as exc:
            self.problem.show_message(str(exc))
            return
        self.names.setText(", ".join(names))
        self.refresh()

    def refresh(self, *_):
        """Read the head of the file with the chosen options and show it (or say why not)."""
        for w in (self.delimiter, self.encoding, self.header, self.skip_rows):
            w.setEnabled(self.text)
        self.sheet.setEnabled(not self.text)
        self.query.setEnabled(not self.text)
        try:
            table = tasks.preview(self.registry, self.path, self.options())
        except (BadInput, OSError) as exc:
            self.preview_model.set_table(None)
            self.problem.show_message(str(exc))
            self.preview_note.setText("")
            return
        self.problem.show_message("")
        if table is None:
            self.preview_model.set_table(None)
            self.preview_note.setText("This format is read whole, so it is previewed once it is open.")
        elif isinstance(table, Table):
            shown = table if table.n_rows <= PREVIEW_ROWS else Table(table.frame.head(PREVIEW_ROWS), table.schema)
            self.preview_model.set_table(shown)
            fit_columns(self.preview_view, max_width=200)
            kinds = ", ".join(f"{c.name}: {c.kind.value}" for c in table.schema.columns[:8])
            more = " …" if len(table.columns) > 8 else ""
            self.preview_note.setText(f"First {shown.n_rows} rows, {len(table.columns)} columns ({kinds}{more}).")
        else:
            self.preview_model.set_table(None)
            self.preview_note.setText(
                f"Transaction data: {table.n_features:,} distinct items in the first {table.n_rows:,} records."
            )


def default_export_folder(name: str = "") -> Path:
    docs = QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation) or str(Path.home())
    return Path(docs) / "Veil releases" / name if name else Path(docs) / "Veil releases"


REPORT_PLAIN = "Write the report (HTML and PDF: the privacy verdict, the risk before and after)"
REPORT_TRAINS = "Write the report (HTML and PDF; trains a classifier, so it can take a while)"


class ExportDialog(QDialog):
    """Which run to release, in which format, where; the rules are the engine's."""

    def __init__(
        self,
        registry,
        runs,
        run_id: int | None,
        base: Path,
        parent=None,
        *,
        stem: str = "release",
        describe: Callable[[int | None], str] | None = None,
        not_restored: str = "",
    ):
        super().__init__(parent)
        self._base, self._stem, self._describe = base, stem, describe
        self._registry, self._runs = registry, runs
        self.setWindowTitle("Export release")
        self.setObjectName("export-dialog")
        self.run = QComboBox()
        # a run's label names every model and value: the box stays as wide as some 60 characters (the
        # whole label in its list and tooltip), so that the dialog fits the screen
        self.run.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.run.setMinimumContentsLength(60)
        for entry in runs.exportable():
            text = f"#{entry.id} {entry.label} — {short_verdict(entry.outcome)}"
            self.run.addItem(text, entry.id)
            self.run.setItemData(self.run.count() - 1, text, Qt.ToolTipRole)
        if run_id is not None and self.run.findData(run_id) >= 0:
            self.run.setCurrentIndex(self.run.findData(run_id))
        self.fmt = QComboBox()
        for cls in registry.classes("exporter"):
            self.fmt.addItem(f"{cls.title or cls.name} (.{cls.extension})", cls.name)
        self.fmt.setCurrentIndex(max(self.fmt.findData(registry.preferred("exporter")), 0))
        self.shuffle = QCheckBox("Shuffle the rows (recommended: row order can identify people)")
        self.shuffle.setChecked(True)
        self.report = QCheckBox(REPORT_TRAINS)
        self.report.setChecked(True)
        self.folder = QLineEdit(self._suggested())
        self.note = muted("")  # what the chosen run releases, when that needs saying
        self.note.setObjectName("export-note")
        self.run.currentIndexChanged.connect(self._run_chosen)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        where = QHBoxLayout()
        where.addWidget(self.folder, 1)
        where.addWidget(browse)
        form = QFormLayout()
        form.addRow("Run", self.run)
        form.addRow("", self.note)
        form.addRow("Format", self.fmt)
        form.addRow("Folder", where)
        self._database_rows(form)
        form.addRow("", self.shuffle)
        form.addRow("", self.report)
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.Save)
        self.save_button.setText("Export")
        self.save_button.setEnabled(self.run.count() > 0)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(
            muted(
                "Veil writes the release, a manifest (method, parameters, seed, SHA-256 of input and output, the "
                "privacy verdict) and, where available, a report. The written file is read back and checked "
                "against its privacy model before it takes its name: a release that fails is not written. "
                "Identifier columns are never exported; cells a spreadsheet would run as formulas are escaped."
            )
        )
        if self.run.count() == 0:
            layout.addWidget(ErrorLabel())
            layout.itemAt(layout.count() - 1).widget().show_message(
                f"No run has a release to export: {not_restored}."
                if not_restored
                else "No run has a release to export yet: run a configuration whose release holds."
            )
        layout.addWidget(buttons)
        self._describe_run()
        self._fit_formats()
        self.resize(680, self.sizeHint().height())

    def _database_rows(self, form: QFormLayout) -> None:
        """The choice to write the release as a new table of an existing database (a format that
        writes tables): the database, the table's name, and whether a table of that name is replaced
        (off by default: the export is then refused, naming the table). The manifest and report still
        go to the folder."""
        self.into = QCheckBox("Write the release as a new table of an existing database")
        self.into.setObjectName("export-into")
        self.database = QLineEdit()
        self.database.setObjectName("export-database")
        self.database.setPlaceholderText("the database file")
        pick = QPushButton("Browse…")
        pick.clicked.connect(self._browse_database)
        self.table_name = QLineEdit("release")
        self.table_name.setObjectName("export-table")
        self.replace_table = QCheckBox("Replace a table of that name already in the database")
        self.replace_table.setObjectName("export-replace")
        row = QHBoxLayout()
        row.addWidget(self.database, 1)
        row.addWidget(pick)
        self._database_widgets = (self.database, pick, self.table_name, self.replace_table)
        form.addRow("", self.into)
        form.addRow("Database", row)
        form.addRow("Table", self.table_name)
        form.addRow("", self.replace_table)
        self.into.toggled.connect(self._fit_database)
        self.fmt.currentIndexChanged.connect(self._fit_database)
        self._fit_database()

    def _fit_database(self, *_) -> None:
        """Offered for a format that writes tables only; its fields active once chosen."""
        able = bool(getattr(self._registry.get("exporter", self.fmt.currentData()), "writes_tables", False))
        self.into.setEnabled(able)
        if not able:
            self.into.setChecked(False)
        for w in self._database_widgets:
            w.setEnabled(self.into.isChecked())

    def _browse_database(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "Write into database", self.database.text() or str(self._base))
        if chosen:
            self.database.setText(chosen)

    def _suggested(self) -> str:
        """A folder of its own per run (``demo-hospital-admissions-run-3``) beside the last one used."""
        suffix = f"-run-{self.run.currentData()}" if self.run.currentData() is not None else ""
        return str(self._base / f"{self._stem}{suffix}")

    def _run_chosen(self, *_):
        if Path(self.folder.text()).parent == self._base:  # not typed by the user: follow the run
            self.folder.setText(self._suggested())
        self._describe_run()
        self._fit_formats()

    def _fit_formats(self) -> None:
        """A set-valued release is written one item set per line: only the formats that declare they
        stream item sets are offered for it (the first of them chosen); every format for the others."""
        release = self._release()
        sets = release is not None and release.sets is not None
        model = self.fmt.model()
        able = []
        for i in range(self.fmt.count()):
            writes = self._registry.get("exporter", self.fmt.itemData(i)).writes_sets
            model.item(i).setEnabled(writes or not sets)
            if writes:
                able.append(i)
        if sets and able and self.fmt.currentIndex() not in able:
            self.fmt.setCurrentIndex(able[0])
            self._chose_sets_format = True
        elif not sets and getattr(self, "_chose_sets_format", False):  # back from a set-valued run
            self.fmt.setCurrentIndex(max(self.fmt.findData(self._registry.preferred("exporter")), 0))
            self._chose_sets_format = False

    def _describe_run(self) -> None:
        text = self._describe(self.run_id()) if self._describe is not None else ""
        self.note.setText(text)
        self.note.setVisible(bool(text))
        release = self._release()
        skipped = classifier_skipped(release) if release is not None else ""
        self.report.setText(REPORT_TRAINS if not skipped else f"{REPORT_PLAIN} (no classifier: {skipped})")

    def _release(self):
        entry = self._runs.entry(self.run_id()) if self.run_id() is not None else None
        return (
            entry.outcome.result.release
            if entry is not None and entry.outcome is not None and entry.outcome.result is not None
            else None
        )

    def _browse(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "Export into folder", self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def run_id(self) -> int | None:
        return self.run.currentData()

    def options(self) -> ExportOptions:
        into = None
        if self.into.isChecked():
            into = IntoTable(
                os.path.expanduser(self.database.text().strip()),
                self.table_name.text().strip(),
                self.replace_table.isChecked(),
            )
        return ExportOptions(fmt=self.fmt.currentData(), shuffle=self.shuffle.isChecked(), into=into)


def _versions() -> str:
    import matplotlib
    import numpy
    import pandas
    import PySide6
    from PySide6.QtCore import qVersion

    return (
        f"Veil {__version__} · Python {platform.python_version()} · Qt {qVersion()} · "
        f"PySide6 {PySide6.__version__} · NumPy {numpy.__version__} · pandas {pandas.__version__} · "
        f"matplotlib {matplotlib.__version__}"
    )


def _plugins_table(registry) -> QTableView:
    view = fast_table(QTableView())
    view.setModel(PluginsModel(registry, view))
    view.verticalHeader().hide()
    fit_columns(view, sample_rows=200, max_width=320)
    return view


class AboutDialog(QDialog):
    def __init__(self, registry, parent=None):
        super().__init__(parent)
        self.setWindowTitle("About Veil")
        self.setObjectName("about-dialog")
        layout = QVBoxLayout(self)
        title = QLabel(
            f"<h2>Veil {__version__}</h2><p>Release sensitive tables safely: everything runs on this "
            "computer and nothing leaves it.</p>"
        )
        layout.addWidget(title)
        self.versions = muted(_versions())
        layout.addWidget(self.versions)
        n, failed = len(registry.all()), len(registry.failures)
        layout.addWidget(QLabel(f"{n} plugins loaded" + (f", {failed} failed (see Help ▸ Plugins)" if failed else "")))
        self.table = _plugins_table(registry)
        layout.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(720, 480)


class PluginsDialog(QDialog):
    """Every plugin, and every one that failed to load with why (details on demand)."""

    def __init__(self, registry, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Plugins")
        self.setObjectName("plugins-dialog")
        layout = QVBoxLayout(self)
        self.table = _plugins_table(registry)
        layout.addWidget(QLabel("<b>Loaded</b>"))
        layout.addWidget(self.table, 2)
        self.failures = QPlainTextEdit(readOnly=True)
        self.failures.setLineWrapMode(QPlainTextEdit.NoWrap)
        if registry.failures:
            layout.addWidget(
                QLabel(
                    f"<b>Failed to load ({len(registry.failures)})</b> — Veil runs without them; "
                    "tell whoever provided the plugin:"
                )
            )
            text = "\n\n".join(
                f"{f.source}: {f.error}" + (f"\n{f.details}" if f.details else "") for f in registry.failures
            )
            self.failures.setPlainText(text)
            layout.addWidget(self.failures, 1)
        else:
            layout.addWidget(muted("Every plugin loaded."))
            self.failures.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(760, 520)


CLUSTER_URL = re.compile(r"^(local(\[(\d+|\*)\])?|spark://[^\s/]+:\d+(,[^\s/]+:\d+)*|yarn|k8s://\S+)$")


class SettingsDialog(QDialog):
    """Veil's settings: the cluster (a Spark master) that runs of methods able to scale out go to."""

    def __init__(self, registry, master: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setObjectName("settings-dialog")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.master = QLineEdit(master)
        self.master.setObjectName("cluster-master")
        self.master.setPlaceholderText("empty: every run on this computer")
        self.master.setToolTip("local[*] or local[2] (Spark on this computer's cores), spark://host:7077 (a cluster)")
        form.addRow("Spark master URL", self.master)
        layout.addLayout(form)
        able = [
            registry.get("algorithm", n).title
            for n in registry.names("algorithm")
            if registry.get("algorithm", n).scale_out is not None
        ]
        layout.addWidget(
            muted(
                "With a master set, the runs of "
                + (", ".join(able) if able else "no installed method")
                + " go to Apache Spark there (Veil's Spark extra and Java 17 are needed on this computer); "
                "their progress "
                "shows Spark's finished tasks, and Cancel stops the Spark job. Other methods still run here. "
                "A remote master receives the records of the data you run: use one you trust."
            )
        )
        self.error = ErrorLabel()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(560, 220)

    def value(self) -> str:
        return self.master.text().strip()

    def accept(self) -> None:
        url = self.value()
        if url and not CLUSTER_URL.match(url):
            self.error.show_message(f"{url!r} is not a Spark master URL: write local[*], local[2] or spark://host:7077")
            return
        super().accept()
