"""The dataset panel: the data itself, its columns' kinds and roles with a summary of each, and
the binarisation recipe with a live preview of the features it makes."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from veil.engine import (
    AGGREGATES,
    NUMERIC_AGGREGATES,
    BadInput,
    Kind,
    Role,
    Table,
    is_hierarchy_spec,
    match_hierarchy_files,
)

from .models import (
    ROLE_COLOURS,
    ColumnsModel,
    FeaturesModel,
    MatrixModel,
    StepsModel,
    TableModel,
    has_variable_labels,
)
from .state.setvalued_view import draw_items
from .state import DatasetState
from .widgets import ComboDelegate, ErrorLabel, Histogram, fast_table, fit_columns, muted

ROLE_WORDS = {
    Role.IDENTIFIER: "identifier (never released)",
    Role.QUASI_IDENTIFIER: "quasi-identifier",
    Role.SENSITIVE: "sensitive",
    Role.TARGET: "target (class to predict)",
    Role.INSENSITIVE: "insensitive",
    Role.WEIGHT: "weight (survey weight: how many people a record stands for)",
    Role.HOUSEHOLD: "household (household id: an identifier, released only if you agree below)",
}


def role_legend() -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for role in (Role.IDENTIFIER, Role.QUASI_IDENTIFIER, Role.SENSITIVE, Role.TARGET, Role.WEIGHT, Role.HOUSEHOLD):
        chip = QLabel(role.value)
        chip.setStyleSheet(
            f"background: {ROLE_COLOURS[role].name()}; color: #202124; padding: 1px 6px;border-radius: 3px;"
        )
        chip.setToolTip(ROLE_WORDS[role])
        row.addWidget(chip)
    row.addStretch(1)
    return box


class DatasetPanel(QWidget):
    population_requested = Signal()  # the user asks to open a population beside the data
    population_closed = Signal()
    aggregate_chosen = Signal(str, object)  # a quasi-identifier aggregated inside the groups by a function (None: not)
    subset_marked = Signal(str)  # this 1/0 column marks the data's records in the open file, the population

    def __init__(self, dataset: DatasetState, parent=None):
        super().__init__(parent)
        self.dataset = dataset
        self.aggregates_of = dict  # the columns aggregated inside the groups, {column: function} (the window's config)
        self.table_model = TableModel()
        self.view = fast_table(QTableView(), stretch_last=False)
        self.view.setModel(self.table_model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectItems)
        header = self.view.horizontalHeader()
        header.setContextMenuPolicy(Qt.CustomContextMenu)
        header.customContextMenuRequested.connect(self._header_menu)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._columns_tab(), "Columns")
        self.tabs.addTab(self._features_tab(), "Features")
        self.tabs.addTab(self._sets_tab(), "Item sets")
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.view)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([430, 560])  # the columns' kinds, roles and counts readable at the default size
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self._population_row())
        layout.addWidget(split, 1)
        dataset.changed.connect(self._on_changed)
        self._show_population()

    # -- building -------------------------------------------------------------------------------
    def _columns_tab(self) -> QWidget:
        self.columns_model = ColumnsModel(self.dataset)
        self.columns_view = fast_table(QTableView())
        self.columns_view.setModel(self.columns_model)
        self.columns_view.setItemDelegate(ComboDelegate(self.columns_view))
        self.columns_view.setEditTriggers(QAbstractItemView.AllEditTriggers)
        self.columns_view.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.columns_view.setContextMenuPolicy(Qt.CustomContextMenu)
        self.columns_view.customContextMenuRequested.connect(self._columns_menu)
        self.columns_view.selectionModel().currentRowChanged.connect(lambda cur, _: self._summarise(cur.row()))
        self.columns_view.verticalHeader().hide()
        self.column_problem = ErrorLabel()
        self.columns_model.problem.connect(self.column_problem.show_message)
        self.summary_title = QLabel()
        self.summary_facts = muted("")
        self.histogram = Histogram()
        box = QGroupBox("Column summary")
        inner = QVBoxLayout(box)
        inner.addWidget(self.summary_title)
        inner.addWidget(self.summary_facts)
        inner.addWidget(self.histogram, 1)
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(role_legend())
        self.hierarchy_folder_button = QPushButton("Load hierarchies from a folder…")
        self.hierarchy_folder_button.setToolTip(
            "Attach the hierarchy files of a folder whose names match columns (ARX's "
            "<data>_hierarchy_<column>.csv, or <column>.csv), after showing what matched"
        )
        self.hierarchy_folder_button.clicked.connect(lambda: self.load_hierarchy_folder())
        hint = QHBoxLayout()
        hint.addWidget(
            muted(
                "Click a kind or role to change it; select several rows (or data columns) and "
                "right-click to give them one role."
            ),
            1,
        )
        hint.addWidget(self.hierarchy_folder_button)
        layout.addLayout(hint)
        self.release_household_box = QCheckBox("Release the household id")
        self.release_household_box.setObjectName("release-household")
        self.release_household_box.setToolTip(
            "A household id is an identifier and no release holds it unless you agree. Released, it lets "
            "users of the data study households, and the release's household risk is measured on it: once "
            "one member is re-identified, the id leads to the others. Kept in the project."
        )
        self.release_household_box.hide()  # shown while a column is marked household
        layout.addWidget(self.release_household_box)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.columns_view)
        split.addWidget(box)
        split.setSizes([300, 200])
        layout.addWidget(split, 1)
        layout.addWidget(self.column_problem)
        return tab

    def _population_row(self) -> QWidget:
        """The population held with the data (δ-presence and k-map judge against it), with buttons
        to open one and to let it go."""
        self.population_label = QLabel()
        self.population_label.setToolTip(
            "The population the data was drawn from: δ-presence and k-map count "
            "each released group's matching records in it"
        )
        self.population_button = QPushButton("Open population…")
        self.population_button.setToolTip(
            "Open the file of the population the data was drawn from (read like the "
            "data; it must hold every quasi-identifier column)"
        )
        self.population_button.clicked.connect(self.population_requested)
        self.close_population_button = QPushButton("Close population")
        self.close_population_button.clicked.connect(self.population_closed)
        self.population_row = QWidget()
        row = QHBoxLayout(self.population_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("<b>Population</b>"))
        row.addWidget(self.population_label, 1)
        row.addWidget(self.population_button)
        row.addWidget(self.close_population_button)
        return self.population_row

    def _show_population(self) -> None:
        text = self.dataset.population_text
        self.population_label.setText(
            text or "none: δ-presence and k-map with a population table need one opened beside the data"
        )
        self.population_label.setEnabled(bool(text))
        source = self.dataset.source
        marked = source is not None and bool(source.subset_column)  # the data is defined by the population
        self.population_button.setEnabled(self.dataset.table is not None and not marked)
        self.close_population_button.setVisible(bool(text) and not marked)

    def _features_tab(self) -> QWidget:
        self.steps_model = StepsModel(self.dataset)
        self.steps_view = fast_table(QTableView())
        self.steps_view.setModel(self.steps_model)
        self.steps_view.setItemDelegate(ComboDelegate(self.steps_view))
        self.steps_view.setEditTriggers(QAbstractItemView.AllEditTriggers)
        self.steps_view.verticalHeader().hide()
        self.features_model = FeaturesModel(self.dataset)
        self.features_view = fast_table(QTableView())
        self.features_view.setModel(self.features_model)
        self.features_view.verticalHeader().hide()
        self.features_summary = QLabel()
        self.features_summary.setWordWrap(True)
        self.features_help = muted(
            "Methods that work on binary data see these features. Choose how each column "
            "becomes features; the preview updates as you do."
        )
        self.recipe_problem = ErrorLabel()
        self.steps_model.problem.connect(self.recipe_problem.show_message)
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(self.features_summary)
        layout.addWidget(self.features_help)
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.steps_view)
        split.addWidget(self.features_view)
        layout.addWidget(split, 1)
        layout.addWidget(self.recipe_problem)
        return tab

    def _sets_tab(self) -> QWidget:
        """Set-valued data in numbers and one chart: what a records × items table cannot show."""
        self.sets_column = QComboBox()
        self.sets_column.setToolTip("The table's columns of kind itemset")
        self.sets_column.currentIndexChanged.connect(lambda _: self._show_sets())
        self.use_sets_button = QPushButton("Anonymise these item sets")
        self.use_sets_button.setToolTip(
            "Work on this column's item sets as set-valued records: the methods "
            "for set-valued data are offered for them (reopen the file to go back)"
        )
        self.use_sets_button.clicked.connect(self._use_sets)
        self.sets_chooser = QWidget()
        row = QHBoxLayout(self.sets_chooser)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Column"))
        row.addWidget(self.sets_column, 1)
        row.addWidget(self.use_sets_button)
        self.sets_facts = QLabel()
        self.sets_facts.setWordWrap(True)
        self.sets_facts.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self._sets_plot = None  # (figure, canvas), made when item sets are first drawn (the window opens sooner)
        self._sets_holder = QVBoxLayout()
        self._sets_holder.setContentsMargins(0, 0, 0, 0)
        self.sets_problem = ErrorLabel()
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(self.sets_chooser)
        layout.addWidget(self.sets_facts)
        layout.addLayout(self._sets_holder, 1)
        layout.addWidget(self.sets_problem)
        return tab

    @property
    def sets_figure(self):
        return self._sets_chart()[0]

    @property
    def sets_canvas(self):
        return self._sets_chart()[1]

    def _sets_chart(self):
        if self._sets_plot is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
            from matplotlib.figure import Figure

            figure = Figure(figsize=(6, 3.2), layout="constrained")
            canvas = FigureCanvasQTAgg(figure)
            self._sets_holder.addWidget(canvas, 1)
            self._sets_plot = (figure, canvas)
        return self._sets_plot

    def _sets_available(self) -> bool:
        return self.dataset.set_valued or bool(self.dataset.itemset_columns())

    def _refresh_sets_tab(self) -> None:
        """Offer the tab for set-valued data and for a table with columns of item sets."""
        columns = self.dataset.itemset_columns()
        self.sets_column.blockSignals(True)
        current = self.sets_column.currentText()
        self.sets_column.clear()
        self.sets_column.addItems(columns)
        if current in columns:
            self.sets_column.setCurrentText(current)
        self.sets_column.blockSignals(False)
        self.sets_chooser.setVisible(bool(columns))
        self.tabs.setTabEnabled(2, self._sets_available())
        self._show_sets()

    def _show_sets(self) -> None:
        column = self.sets_column.currentText() or None
        summary = self.dataset.set_summary(column)
        self.sets_problem.show_message("")
        if summary is None and self._sets_plot is None:  # nothing drawn and nothing to draw: matplotlib waits
            self.sets_facts.setText("")
            self.summary_shown = summary
            return
        self.sets_figure.clear()
        if summary is None:
            self.sets_facts.setText("")
        else:
            source = f"Item sets of column <i>{summary.column}</i>: " if summary.column else ""
            rows = "".join(
                f"<tr><td style='color:#5f6368; padding-right:10px'>{what}</td><td>{value}</td></tr>"
                for what, value in summary.facts()
            )
            self.sets_facts.setText(f"{source}<table cellspacing='0'>{rows}</table>")
            draw_items(self.sets_figure, summary)
        self.sets_canvas.draw_idle()
        self.summary_shown = summary

    def _use_sets(self) -> None:
        try:
            self.dataset.use_sets(self.sets_column.currentText())
        except BadInput as exc:
            self.sets_problem.show_message(str(exc))

    # -- reacting to the state ------------------------------------------------------------------
    def _on_changed(self, what: str) -> None:
        data = self.dataset.data
        self._show_population()
        household = self.dataset.household
        self.release_household_box.setVisible(household is not None)
        if household is not None:
            self.release_household_box.setText(f"Release the household id ({household})")
        self.release_household_box.setChecked(self.dataset.release_household)
        if what == "household":
            return
        if what == "population":
            return
        if what == "data":
            if self.dataset.set_valued:
                self.view.setModel(MatrixModel(data, self.view))
            else:
                self.view.setModel(self.table_model)
                self.table_model.set_table(data)
            fit_columns(self.view)
            self.view.horizontalHeader().setStretchLastSection(self.dataset.set_valued)  # the items take the width
            fit_columns(self.columns_view, sample_rows=500, max_width=150)
            # kinds, roles and counts keep their full width; the names give way (elided, full in the tooltip)
            self.columns_view.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
            self.columns_view.setColumnHidden(ColumnsModel.LABEL, not has_variable_labels(data))
            self.tabs.setTabEnabled(0, isinstance(data, Table))
            self._refresh_sets_tab()
            self.tabs.setCurrentIndex(0 if isinstance(data, Table) else 2)
            if isinstance(data, Table) and len(data.columns):
                roles = [c.role for c in data.schema.columns]
                first = next((i for i, r in enumerate(roles) if r is not Role.IDENTIFIER), 0)
                self.columns_view.selectRow(first)
            self.column_problem.show_message("")
            self.recipe_problem.show_message("")
        elif isinstance(data, Table):
            self.table_model.set_table(data)
            self._summarise(self.columns_view.currentIndex().row())
            self.column_problem.show_message("")
            shown = [self.sets_column.itemText(i) for i in range(self.sets_column.count())]
            if self.dataset.itemset_columns() != shown:  # a column became (or stopped being) item sets
                self._refresh_sets_tab()
        # widths follow the data, not each rule change (a change must not move what is under the mouse)
        for view in (self.steps_view, self.features_view) if what == "data" else (self.features_view,):
            fit_columns(view, max_width=130)
            view.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)  # names take what is left
        self._describe_features()

    def _describe_features(self) -> None:
        data, n = self.dataset.data, self.features_model.n_features
        if isinstance(data, Table):
            steps = len(self.dataset.steps())
            target = data.schema.target
            text = (
                f"<b>{n:,} binary features</b> from {steps} columns; "
                + (f"the target <i>{target}</i> gives the labels" if target else "no target column (no labels)")
                + "; identifiers never become features."
            )
        else:
            text = (
                f"<b>{n:,} items</b>: methods that take set-valued records see them as sets, binary methods "
                f"as one feature per item."
                if data is not None
                else ""
            )
        self.features_summary.setText(text)
        self.features_help.setVisible(isinstance(data, Table))
        self.steps_view.setVisible(isinstance(data, Table))  # set-valued data has no columns to turn into features

    def _summarise(self, row: int) -> None:
        table = self.dataset.table
        if table is None or not 0 <= row < len(table.columns):
            self.summary_title.setText("")
            self.histogram.set_bars((), False)
            return
        col = table.schema.columns[row]
        stats = self.dataset.stats.get(col.name)
        self.summary_title.setText(f"<b>{col.name}</b> — {col.kind.value}, {ROLE_WORDS[col.role]}")
        if stats is None:
            return
        facts = [f"{stats.distinct:,} distinct values", f"{stats.missing:,} missing"]
        if stats.minimum is not None:
            facts.append(f"from {stats.minimum:g} to {stats.maximum:g}, mean {stats.mean:.3g}")
        unique = stats.distinct == table.n_rows - stats.missing and not stats.numeric and stats.distinct > 1
        if unique:
            facts.append("every value is unique: this column alone singles out each record")
        elif stats.other:
            facts.append(f"{stats.other:,} rows in other values")
        self.summary_facts.setText("; ".join(facts))
        self.histogram.set_bars(() if unique else stats.bars, stats.numeric, "")

    # -- giving several columns one role ----------------------------------------------------------
    def _role_menu(self, names: list[str], global_pos) -> None:
        if not names or self.dataset.table is None:
            return
        menu = QMenu(self)
        label = names[0] if len(names) == 1 else f"{len(names)} columns"
        for role in Role:
            action = menu.addAction(f"Mark {label} as {role.value}")
            action.triggered.connect(lambda _=False, r=role: self.set_roles(names, r))
        if len(names) == 1:
            menu.addSeparator()
            menu.addAction(f"Hierarchy of {label}…").triggered.connect(lambda _=False: self.edit_hierarchy(names[0]))
            if self.dataset.table.schema[names[0]].role is Role.QUASI_IDENTIFIER:
                self._aggregate_menu(menu, names[0])
            source = self.dataset.source
            if source is not None and source.path and not source.demo and self.dataset.population is None:
                subset = menu.addAction(f"This file is the population: {label} (1/0) marks the data's records")
                subset.setStatusTip(
                    "The records marked 1 become the data; the whole file is the population "
                    "δ-presence and k-map judge against"
                )
                subset.triggered.connect(lambda _=False: self.subset_marked.emit(names[0]))
        menu.addAction("Load hierarchies from a folder…").triggered.connect(
            lambda _=False: self.load_hierarchy_folder()
        )
        menu.popup(global_pos)

    def _aggregate_menu(self, menu: QMenu, column: str) -> None:
        """ "Aggregate in groups ▸ mean/…": the runs do not group on ``column`` but replace its values
        inside each group by the group's aggregate (ARX's microaggregation of an attribute)."""
        numeric = self.dataset.table.schema[column].kind is Kind.NUMERIC
        chosen = self.aggregates_of().get(column)
        sub = menu.addMenu(f"Aggregate {column} in groups")
        for how in AGGREGATES:
            action = sub.addAction(how)
            action.setCheckable(True)
            action.setChecked(how == chosen)
            action.setEnabled(numeric or how not in NUMERIC_AGGREGATES)
            action.triggered.connect(lambda _=False, f=how: self.aggregate_chosen.emit(column, f))
        sub.addSeparator()
        off = sub.addAction("Do not aggregate (generalise it)")
        off.setEnabled(chosen is not None)
        off.triggered.connect(lambda _=False: self.aggregate_chosen.emit(column, None))

    def edit_hierarchy(self, column: str, in_use: bool = False) -> None:
        """Open the hierarchy builder of ``column``; accepting it attaches the hierarchy. ``in_use``
        opens it on the hierarchy methods use now (a release's values are nodes of it)."""
        from .hierarchy_dialog import HierarchyDialog

        dialog = HierarchyDialog(self.dataset.table, column, self, in_use=in_use, folder=self._hierarchy_folder())
        dialog.accepted.connect(lambda: self._apply_hierarchy(column, dialog.hierarchy))
        self.hierarchy_dialog = dialog
        dialog.open()

    def load_hierarchy_folder(self, folder: str | None = None):
        """Match the hierarchy files of a folder to the columns by name and show what matched;
        attaching the ticked ones (``folder`` None: ask for it). Returns the dialog shown."""
        from PySide6.QtWidgets import QFileDialog

        from veil.engine import read_hierarchy_folder

        from .hierarchy_folder import HierarchyFolderDialog

        table = self.dataset.table
        if table is None:
            self.column_problem.show_message("open a table first: hierarchies belong to its columns")
            return None
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, "Folder of hierarchy files", self._hierarchy_folder())
            if not folder:
                return None
        source = self.dataset.source
        population = self.dataset.population  # neither the data nor its population is a hierarchy
        skip = [f for f in (source.path, source.population, getattr(population, "source", None)) if f] if source else []
        try:
            found = read_hierarchy_folder(table, folder, skip)
        except BadInput as exc:
            self.column_problem.show_message(str(exc))
            return None
        if not found.rows:
            self.column_problem.show_message(
                f"no file in {folder} names a column (ARX's <data>_hierarchy_<column>.csv, or <column>.csv)"
            )
            return None
        dialog = HierarchyFolderDialog(found, self)
        dialog.accepted.connect(lambda: self._attach_all(dialog.chosen()))
        self.folder_dialog = dialog
        dialog.open()
        return dialog

    def _attach_all(self, hierarchies: dict) -> None:
        try:
            self.dataset.set_hierarchies(hierarchies)
        except BadInput as exc:
            self.column_problem.show_message(str(exc))

    def _hierarchy_folder(self) -> str:
        """Where the hierarchy file chooser starts: beside a hierarchy file the data already uses, else
        the first folder beside the data or its population whose files name a column (ARX's examples
        keep them together), else beside the data file."""
        source = self.dataset.source
        if source is None or source.demo:
            return ""
        used = [f for f in source.hierarchies.values() if f and not is_hierarchy_spec(f)]
        if used:
            return str(Path(used[0]).parent)
        population = self.dataset.population
        files = [f for f in (source.path, source.population, getattr(population, "source", None)) if f]
        table = self.dataset.table
        for folder in dict.fromkeys(str(Path(f).parent) for f in files):
            try:
                if table is not None and match_hierarchy_files(folder, table.schema.names, files).matched:
                    return folder
            except BadInput:  # a folder that is gone
                continue
        return str(Path(files[0]).parent) if files else ""

    def _apply_hierarchy(self, column: str, hierarchy) -> None:
        try:
            self.dataset.set_hierarchy(column, hierarchy)
        except BadInput as exc:
            self.column_problem.show_message(str(exc))

    def set_roles(self, names: list[str], role: Role) -> None:
        try:
            self.dataset.set_roles(names, role)
        except BadInput as exc:
            self.column_problem.show_message(str(exc))

    def _header_menu(self, pos) -> None:
        header = self.view.horizontalHeader()
        clicked = header.logicalIndexAt(pos)
        table = self.dataset.table
        if table is None or clicked < 0:
            return
        selected = sorted({i.column() for i in self.view.selectionModel().selectedColumns()})
        cols = selected if clicked in selected else [clicked]
        self._role_menu([table.columns[c] for c in cols], header.mapToGlobal(pos))

    def _columns_menu(self, pos) -> None:
        rows = sorted({i.row() for i in self.columns_view.selectionModel().selectedRows()})
        at = self.columns_view.indexAt(pos).row()
        if at >= 0 and at not in rows:
            rows = [at]
            self.columns_view.selectionModel().select(
                self.columns_model.index(at, 0), QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows
            )
        self._role_menu([self.columns_model.name(r) for r in rows], self.columns_view.viewport().mapToGlobal(pos))
