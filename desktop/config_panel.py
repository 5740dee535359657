"""The configuration panel: privacy model, methods, metrics and sweeps, with forms generated from
each plugin's parameters. Only methods that take the open data are offered."""

from __future__ import annotations

from contextlib import contextmanager

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from veil.engine import (
    BINARY,
    CHEAP,
    TABLE,
    BadInput,
    Table,
    cite,
    judgement_words,
    may_release_sensitive,
    unused_hierarchies,
)

from .forms import ParamForm
from .state.ranking import has_weight_sliders, role_problem, roles_text, weight_params, weights_in
from .ranking_panel import WeightSliders
from .state import memory_note, metric_cost_note, metric_fits, model_for
from .widgets import ErrorLabel, muted

NO_MODEL = "None: no privacy claim"


class _ClickLabel(QLabel):
    """A wrapping label that toggles its check box when clicked (a QCheckBox cannot wrap)."""

    def __init__(self, text: str, check: QCheckBox):
        super().__init__(text)
        self.setWordWrap(True)
        self._check = check

    def mousePressEvent(self, event):
        if self._check.isEnabled():
            self._check.toggle()


class MethodRow(QWidget):
    """A method's check box, what it is, and its parameter form (shown while it is chosen); for a
    method taking a table, a second step: one of the ``perturbers`` (the methods that declare they
    perturb a release record for record, ``Algorithm.perturbs``) with its own form."""

    then_changed = Signal()

    def __init__(self, cls, parent=None, perturbers=()):
        super().__init__(parent)
        self.cls = cls
        self.perturbers = {p.name: p for p in perturbers}
        self.then_form: ParamForm | None = None
        self.check = QCheckBox(cls.title or cls.name)
        self.check.setObjectName(f"method-{cls.name}")
        tip = cls.description + (f"\nPaper: {cite(cls.paper, full=True)}" if cls.paper else "")
        self.check.setToolTip(tip.strip())
        self.note = muted("")
        self.form = ParamForm(cls)
        self.sliders: WeightSliders | None = None
        if has_weight_sliders(cls):  # declared weights: three linked sliders in place of their fields
            self.sliders = WeightSliders(cls)
            self.form.embed(self.sliders, weight_params(cls))
            self.sliders.moved.connect(lambda w: self.form.update_values(dict(zip(weight_params(cls), w))))
            self.form.changed.connect(self._show_weights)
            self._show_weights()
        self.roles = muted("")  # which columns the method takes from the roles
        self.roles_problem = ErrorLabel()  # what the roles lack for it
        self.details = QWidget()
        inner = QVBoxLayout(self.details)
        inner.setContentsMargins(22, 0, 0, 6)
        if cls.description:
            inner.addWidget(muted(cls.description))
        inner.addWidget(self.roles_problem)
        inner.addWidget(self.roles)
        self.roles.hide()
        self.features = QCheckBox("on the binary features (see Features)")
        self.features.setToolTip(
            "This method takes the table as it is or its binary features; tick to give it "
            "the features the recipe makes (the papers' setting for feature selection)"
        )
        self.features.setObjectName(f"features-{cls.name}")
        self.features.setVisible(TABLE in cls.accepts and BINARY in cls.accepts)
        inner.addWidget(self.features)
        inner.addWidget(self.form)
        inner.addWidget(self._then_box())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.check)
        layout.addWidget(self.note)
        layout.addWidget(self.details)
        self.note.hide()
        self.details.setVisible(False)
        self.check.toggled.connect(self.details.setVisible)

    def _then_box(self) -> QWidget:
        """ "Then perturb": no second step, or one of the perturbing methods, and its form below."""
        self.then_box = QWidget()
        box = QVBoxLayout(self.then_box)
        box.setContentsMargins(0, 6, 0, 0)
        line = QHBoxLayout()
        label = QLabel("Then perturb the release with")
        self.then_combo = QComboBox()
        self.then_combo.setObjectName(f"then-{self.cls.name}")
        self.then_combo.setToolTip(
            "A second step: a method that perturbs this method's release record for record, on columns "
            "it left as they were; the privacy models judge the perturbed release"
        )
        self.then_combo.addItem("nothing (no second step)", None)
        for name, p in self.perturbers.items():
            self.then_combo.addItem(p.title or name, name)
            self.then_combo.setItemData(self.then_combo.count() - 1, p.description, Qt.ToolTipRole)
        line.addWidget(label)
        line.addWidget(self.then_combo, 1)
        box.addLayout(line)
        self.then_forms = QVBoxLayout()
        self.then_forms.setContentsMargins(22, 0, 0, 0)
        box.addLayout(self.then_forms)
        self.then_box.setVisible(TABLE in self.cls.accepts and bool(self.perturbers))
        self.then_combo.currentIndexChanged.connect(self._then_chosen)
        return self.then_box

    def _then_chosen(self, _index: int = 0) -> None:
        self._then_form(self.then_combo.currentData())
        self.then_changed.emit()

    def _then_form(self, name: str | None) -> None:
        if self.then_form is not None:
            self.then_form.setParent(None)
            self.then_form.deleteLater()
            self.then_form = None
        if name is not None:
            self.then_form = ParamForm(self.perturbers[name], sweep=False)
            self.then_form.setObjectName(f"then-form-{self.cls.name}")
            self.then_form.changed.connect(self.then_changed)
            self.then_forms.addWidget(self.then_form)

    def then_choice(self) -> tuple[str | None, dict]:
        """The second step chosen and its values that differ from the defaults (None: none)."""
        name = self.then_combo.currentData()
        if name is None or self.then_form is None:
            return None, {}
        defaults = {spec.name: spec.default for spec in self.then_form.plugin.param_specs()}
        return name, {k: v for k, v in self.then_form.values().items() if defaults.get(k) != v}

    def show_then(self, choice) -> None:
        """Show the second step ``choice`` (a PluginChoice, or None), without reporting it as an edit."""
        name = choice.name if choice is not None and choice.name in self.perturbers else None
        if name != self.then_combo.currentData():
            self.then_combo.blockSignals(True)
            self.then_combo.setCurrentIndex(max(self.then_combo.findData(name), 0))
            self.then_combo.blockSignals(False)
            self._then_form(name)
        if self.then_form is not None:
            self.then_form.blockSignals(True)
            self.then_form.set_values(choice.values)
            self.then_form.blockSignals(False)

    def _show_weights(self) -> None:
        self.sliders.show_weights(weights_in(self.form.values(), self.cls))

    def show_roles(self, data) -> None:
        """Say which columns the method reads from the roles, or what they lack."""
        values = self.form.values()
        problem = role_problem(self.cls, data, values)
        self.roles_problem.show_message(problem[:1].upper() + problem[1:] + "." if problem else "")
        text = "" if problem else roles_text(self.cls, data, values)
        self.roles.setText(text)
        self.roles.setVisible(bool(text))


class ConfigPanel(QScrollArea):
    run_requested = Signal()

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.registry = controller.registry
        self.config = controller.config
        self._pushing = False
        self.rows: dict[str, MethodRow] = {}
        self.model_form: ParamForm | None = None
        body = QWidget()
        self.body = QVBoxLayout(body)
        self.body.addWidget(self._model_box())
        self.body.addWidget(self._methods_box())
        self.body.addWidget(self._metrics_box())
        self.body.addWidget(self._runs_box())
        self.body.addStretch(1)
        self.setWidget(body)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setMinimumWidth(320)
        self.config.changed.connect(self._on_config)
        controller.dataset.changed.connect(self._on_dataset)
        self._choose_defaults()

    # -- building -------------------------------------------------------------------------------
    def _model_box(self) -> QGroupBox:
        box = QGroupBox("Privacy model")
        self.model_combo = QComboBox()
        self.model_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.addItem(NO_MODEL, None)
        for cls in self.registry.classes("privacy-model"):
            self.model_combo.addItem(cls.title or cls.name, cls.name)
        self.model_combo.currentIndexChanged.connect(self._model_chosen)
        self.model_about = muted("")
        self.model_form_holder = QVBoxLayout()
        layout = QVBoxLayout(box)
        layout.addWidget(self.model_combo)
        layout.addWidget(self.model_about)
        layout.addLayout(self.model_form_holder)
        layout.addWidget(self._also_box())
        return box

    def _also_box(self) -> QWidget:
        """Further models the release must satisfy too (ARX's combined criteria): a checkbox each,
        with its form while it is ticked."""
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        self.also_label = muted("Also require (the release must satisfy every model ticked here):")
        layout.addWidget(self.also_label)
        self.also_checks: dict[str, QCheckBox] = {}
        self.also_forms: dict[str, ParamForm] = {}
        for cls in self.registry.classes("privacy-model"):
            check = QCheckBox(cls.title or cls.name)
            check.setToolTip(cls.description)
            form = ParamForm(cls)
            form.setVisible(False)
            check.toggled.connect(lambda on, n=cls.name: self._also_toggled(n, on))
            form.changed.connect(lambda n=cls.name: self._also_form_changed(n))
            layout.addWidget(check)
            layout.addWidget(form)
            self.also_checks[cls.name], self.also_forms[cls.name] = check, form
        return holder

    def _also_toggled(self, name: str, on: bool) -> None:
        self.also_forms[name].setVisible(on)
        with self._push():
            self.config.require_also(name, on)
            if on:
                self._also_form_changed(name)

    def _also_form_changed(self, name: str) -> None:
        form = self.also_forms[name]
        with self._push():
            self.config.set_params("privacy-model", name, form.values(), form.sweeps(), form.errors())

    def _show_also(self) -> None:
        """Only models other than the main one can be added; ticks follow the state."""
        for name, check in self.also_checks.items():
            main = name == self.config.model
            check.setVisible(not main and self.config.model is not None)
            wanted = name in self.config.also and not main
            if check.isChecked() != wanted:
                check.blockSignals(True)
                check.setChecked(wanted)
                check.blockSignals(False)
            self.also_forms[name].setVisible(wanted)
            if wanted:
                choice = self.config.choice("privacy-model", name)
                self.also_forms[name].set_values(choice.values, choice.sweeps)
        self.also_label.setVisible(self.config.model is not None and len(self.also_checks) > 1)

    def _methods_box(self) -> QGroupBox:
        box = QGroupBox("Methods")
        self.methods_layout = QVBoxLayout(box)
        self.methods_layout.setSpacing(4)
        self.not_offered = muted("")
        self.methods_layout.addWidget(self.not_offered)
        return box

    def _metrics_box(self) -> QGroupBox:
        box = QGroupBox("Metrics")
        grid = QGridLayout(box)
        grid.setVerticalSpacing(2)
        grid.setColumnStretch(1, 1)
        self.metric_boxes: dict[str, QCheckBox] = {}
        self._metric_labels: dict[str, QLabel] = {}
        self.metric_forms: dict[str, ParamForm] = {}
        row = 0
        for category in ("utility", "privacy"):
            classes = [c for c in self.registry.classes("metric") if c.category == category]
            others = [c for c in self.registry.classes("metric") if c.category not in ("utility", "privacy")]
            classes += others if category == "privacy" else []
            if not classes:
                continue
            grid.addWidget(muted(f"{category.capitalize()}"), row, 0, 1, 2)
            row += 1
            for cls in classes:
                check = QCheckBox()
                check.setObjectName(f"metric-{cls.name}")
                check.toggled.connect(self._metrics_chosen)
                cost = "" if cls.cost == CHEAP else " — <i>expensive</i>"
                label = _ClickLabel(
                    f"{cls.title or cls.name} <span style='color:#5f6368'>({cls.name}){cost}</span>", check
                )
                tip = f"{cls.description}".strip() or cls.name
                if cls.cost != CHEAP:
                    tip += (
                        "\n\nExpensive (it trains classifiers): not computed unless chosen; the plan shows an "
                        "estimate, and on a large input it runs on a seeded sample of the records."
                    )
                for w in (check, label):
                    w.setToolTip(tip)
                grid.addWidget(check, row, 0, Qt.AlignTop)
                grid.addWidget(label, row, 1)
                self.metric_boxes[cls.name] = check
                self._metric_labels[cls.name] = label
                row += 1
                if cls.param_specs():
                    form = ParamForm(cls, sweep=False)
                    form.setVisible(False)
                    check.toggled.connect(form.setVisible)
                    form.changed.connect(lambda n=cls.name: self._metric_form_changed(n))
                    grid.addWidget(form, row, 1)
                    self.metric_forms[cls.name] = form
                    row += 1
        return box

    def _metric_form_changed(self, name: str) -> None:
        form = self.metric_forms[name]
        defaults = {s.name: s.default for s in form.plugin.param_specs()}
        changed = {k: v for k, v in form.values().items() if v != defaults.get(k)}
        with self._push():
            self.config.set_metric_params(name, changed, form.errors())

    def _runs_box(self) -> QGroupBox:
        box = QGroupBox("Runs")
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1)
        self.seed.setToolTip("The same seed gives the same release")
        self.repeats = QSpinBox(minimum=1, maximum=100)
        self.repeats.setToolTip("Repeat each run with seeds seed, seed + 1, …")
        self.seed.valueChanged.connect(self._seed_chosen)
        self.repeats.valueChanged.connect(self._seed_chosen)
        form = QFormLayout()
        form.addRow("Seed", self.seed)
        form.addRow("Repeats", self.repeats)
        self.plan_label = QLabel()
        self.plan_label.setWordWrap(True)
        self.plan_error = ErrorLabel()
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Queue every run (Ctrl+R)")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.run_requested)
        layout = QVBoxLayout(box)
        layout.addLayout(form)
        layout.addWidget(self.plan_label)
        layout.addWidget(self.plan_error)
        layout.addWidget(self.run_button)
        return box

    def _choose_defaults(self) -> None:
        if self.config.model is None and self.registry.names("privacy-model"):
            # the model its plugin declares preferred (the first by name when none does)
            self.model_combo.setCurrentIndex(self.model_combo.findData(self.registry.preferred("privacy-model")))
        for name, check in self.metric_boxes.items():
            check.setChecked(self.registry.get("metric", name).cost == CHEAP)  # declared, never named
        self._refresh_plan()

    # -- the user edits -------------------------------------------------------------------------
    @contextmanager
    def _push(self):
        """Widgets write into the state: the state's echo must not write back into the widgets."""
        before, self._pushing = self._pushing, True
        try:
            yield
        finally:
            self._pushing = before
            if not before:
                self._refresh_plan()

    def _model_chosen(self, _index: int) -> None:
        name = self.model_combo.currentData()
        self._show_model_form(name)
        with self._push():
            self.config.set_model(name)
            self._model_form_changed()
        self._show_also()

    def _show_model_form(self, name: str | None) -> None:
        if self.model_form is not None:
            self.model_form.setParent(None)
            self.model_form.deleteLater()
            self.model_form = None
        if name is None:
            self.model_about.setText("The release is checked against nothing; its manifest says so.")
            return
        cls = self.registry.get("privacy-model", name)
        self.model_about.setText(cls.description)
        self.model_form = ParamForm(cls)
        choice = self.config.choice("privacy-model", name)
        if choice.values or choice.sweeps:
            self.model_form.set_values(choice.values, choice.sweeps)
        self.model_form.changed.connect(self._model_form_changed)
        self.model_form_holder.addWidget(self.model_form)
        self._grey_population_params()

    def _grey_population_params(self) -> None:
        """With a population open, the model's parameters the population replaces are unused: greyed
        out, saying why (k-map counts people in the population instead of estimating them)."""
        if self.model_form is None:
            return
        data = self.controller.dataset.data
        counted = getattr(data, "population", None) is not None
        for name in self.model_form.plugin.population_replaces:
            if name not in self.model_form.names():
                continue
            field = self.model_form.field(name)
            for widget in (field.editor, field.sweep, field.label):
                if widget is not None:
                    widget.setEnabled(not counted)
            field.editor.setToolTip(
                "Not used: the population open with the data is counted instead" if counted else field.spec.help
            )

    def _model_form_changed(self) -> None:
        if self.model_form is None:
            return
        with self._push():
            form = self.model_form
            self.config.set_params("privacy-model", form.plugin.name, form.values(), form.sweeps(), form.errors())

    def _method_toggled(self, name: str, on: bool) -> None:
        with self._push():
            self.config.select(name, on)

    def _features_toggled(self, name: str, on: bool) -> None:
        with self._push():
            self.config.set_binary(name, on)

    def _then_changed(self, name: str) -> None:
        row = self.rows[name]
        then, values = row.then_choice()
        errors = row.then_form.errors() if then is not None and row.then_form is not None else None
        with self._push():
            self.config.set_then(name, then, values, errors)

    def _method_form_changed(self, name: str) -> None:
        form = self.rows[name].form
        with self._push():
            self.config.set_params("algorithm", name, form.values(), form.sweeps(), form.errors())

    def _metrics_chosen(self, *_):
        with self._push():  # a greyed-out metric keeps its place in the choice (see _fit_metrics)
            self.config.set_metrics(
                [
                    n
                    for n, c in self.metric_boxes.items()
                    if c.isChecked() or not c.isEnabled() and n in self.config.metrics
                ]
            )

    def _fit_metrics(self) -> None:
        """A metric that says nothing of any chosen method (a feature ranking's accuracy for Mondrian)
        is greyed out and shown unticked; it is not computed. It comes back as it was chosen when a
        method it fits is chosen."""
        for name, check in self.metric_boxes.items():
            fits = metric_fits(self.registry, name, self._steps(), self.config.model)
            if fits == check.isEnabled():
                continue
            label = self._metric_labels[name]
            if not fits:
                label.setProperty("tip", label.toolTip())
            tip = label.property("tip") if fits else "Says nothing of the chosen methods: not computed for them"
            for w in (check, label):
                w.setEnabled(fits)
                w.setToolTip(tip)
            check.blockSignals(True)  # shown unticked, the choice itself kept
            check.setChecked(fits and name in self.config.metrics)
            check.blockSignals(False)
            form = self.metric_forms.get(name)
            if form is not None:
                form.setVisible(check.isChecked())

    def _steps(self) -> list[str]:
        """The chosen methods and their second steps (a metric of either says something of the runs)."""
        then = [self.config.then[n].name for n in self.config.selected if n in self.config.then]
        return list(dict.fromkeys([*self.config.selected, *then]))

    def _seed_chosen(self, *_):
        with self._push():
            self.config.set_seed(self.seed.value(), self.repeats.value())

    # -- the state changed ----------------------------------------------------------------------
    def _on_dataset(self, what: str) -> None:
        if what in ("data", "population"):
            self._grey_population_params()
        if what == "data":
            self._rebuild_methods()
            self._fit_model()
        self._describe_methods()
        self._refresh_plan()

    def _rebuild_methods(self) -> None:
        data = self.controller.dataset.data
        offered = self.registry.methods_for(data)
        for name in [n for n in self.rows if n not in {c.name for c in offered}]:
            row = self.rows.pop(name)
            row.setParent(None)
            row.deleteLater()
            if name in self.config.selected:
                self.config.select(name, False)
        perturbers = [c for c in offered if c.perturbs]  # what may follow a method as its second step
        for i, cls in enumerate(offered):
            if cls.name not in self.rows:
                row = MethodRow(cls, perturbers=perturbers)
                row.check.toggled.connect(lambda on, n=cls.name: self._method_toggled(n, on))
                row.form.changed.connect(lambda n=cls.name: self._method_form_changed(n))
                row.features.toggled.connect(lambda on, n=cls.name: self._features_toggled(n, on))
                row.then_changed.connect(lambda n=cls.name: self._then_changed(n))
                self.rows[cls.name] = row
                self.methods_layout.insertWidget(i, row)
                choice = self.config.methods.get(cls.name)  # chosen before (a project): shown as it was
                if choice is not None and (choice.values or choice.sweeps):
                    row.form.set_values(choice.values, choice.sweeps)
                row.show_then(self.config.then.get(cls.name))
                row.check.setChecked(cls.name in self.config.selected)
                self._method_form_changed(cls.name)
        others = [c.title or c.name for c in self.registry.classes("algorithm") if c.name not in self.rows]
        self.not_offered.setText(f"Not offered for this data: {', '.join(others)}." if others else "")
        self.not_offered.setVisible(bool(others))

    def _fit_model(self) -> None:
        """New data: models that cannot judge it are greyed out; for set-valued data, a privacy
        model that the methods made for item sets work under is chosen."""
        data = self.controller.dataset.data
        items = self.model_combo.model()
        for i in range(1, self.model_combo.count()):
            fit = self.registry.model_fit(self.model_combo.itemData(i), data)
            items.item(i).setEnabled(fit.fits)
            items.item(i).setToolTip("" if fit else f"{fit.reason[:1].upper()}{fit.reason[1:]}")
        for name, check in self.also_checks.items():
            fits = self.registry.model_fit(name, data).fits
            check.setEnabled(fits)
            if not fits and check.isChecked():
                check.setChecked(False)
        wanted = model_for(self.registry, data, self.config.model)
        if wanted != self.config.model:
            self.model_combo.setCurrentIndex(max(self.model_combo.findData(wanted), 0))

    def _describe_methods(self) -> None:
        self._fit_metrics()
        data = self.controller.dataset.data
        has_target = (
            isinstance(data, Table)
            and data.schema.target is not None
            or (not isinstance(data, Table) and getattr(data, "labels", None) is not None)
        )
        for row in self.rows.values():
            row.show_roles(data)
            said = row.check.isChecked() and bool(row.roles_problem.text())  # in red, in the row
            notes = []
            unlabelled = row.cls.needs_labels and not has_target
            row.check.setEnabled(not unlabelled or row.check.isChecked())  # cannot run: not offered to tick
            if unlabelled and not said:
                notes.append("needs a target column: mark one under Columns")
            model = self.config.model
            fitting = self.registry.models_for(row.cls) if row.cls.satisfies else None  # None: any model
            outside = [m for m in self.config.model_names() if fitting is not None and m not in fitting]
            if fitting is not None and (outside or model is None and row.cls.needs_model):
                notes.append(
                    f"works under {' or '.join(fitting)} only"
                    if fitting
                    else f"needs {judgement_words(row.cls.satisfies)}, and none is installed"
                )
            elif row.cls.needs_model and model is None:
                notes.append("needs a privacy model")
            if isinstance(data, Table) and row.cls.kind == "algorithm":
                exposed = may_release_sensitive(data, row.cls, on_features=self.config.on_features(row.cls, data))
                if exposed:
                    notes.append(
                        f"may release the column marked sensitive {', '.join(exposed)} (the report will list it)"
                    )
            row.note.setText("; ".join(notes))
            row.note.setVisible(bool(notes))

    def _on_config(self) -> None:
        if not self._pushing:
            self._sync_from_state()

    def _sync_from_state(self) -> None:
        """Show a configuration that came from elsewhere (a project file)."""
        with self._push():
            i = max(self.model_combo.findData(self.config.model), 0) if self.config.model else 0
            if i != self.model_combo.currentIndex():
                self.model_combo.setCurrentIndex(i)  # shows the model's form with the state's values
            elif self.model_form is not None:
                choice = self.config.choice("privacy-model", self.config.model)
                self.model_form.set_values(choice.values, choice.sweeps)
            self._show_also()
            for name, row in self.rows.items():
                row.check.setChecked(name in self.config.selected)
                row.features.setChecked(name in self.config.binary)
                choice = self.config.choice("algorithm", name)
                row.form.set_values(choice.values, choice.sweeps)
                row.show_then(self.config.then.get(name))
            for name, check in self.metric_boxes.items():
                check.setChecked(name in self.config.metrics)
            for name, form in self.metric_forms.items():
                form.set_values(self.config.metric_params.get(name, {}))
            self.seed.setValue(self.config.seed)
            self.repeats.setValue(self.config.repeats)

    def _refresh_plan(self) -> None:
        if not hasattr(self, "plan_label"):
            return
        self._describe_methods()
        chosen = [r for r in self.rows.values() if r.check.isChecked()]
        forms = [f for f in [self.model_form, *(f for r in chosen for f in (r.form, r.then_form))] if f]
        bad = next((f for f in forms if f.errors()), None)
        if bad is not None:
            self.plan_label.setText("")
            self.plan_error.show_message(f"Fix the parameters of {bad.plugin.title or bad.plugin.name} first.")
            self.run_button.setEnabled(False)
            return
        try:
            planned = self.config.plan(self.registry, self.controller.dataset.data, self.controller.dataset.recipe())
        except BadInput as exc:
            self.plan_label.setText("")
            self.plan_error.show_message(str(exc)[:1].upper() + str(exc)[1:] + ".")
            self.run_button.setEnabled(False)
            return
        memory, refused = memory_note(self.registry, planned, self.controller.dataset.data)
        if refused:
            self.plan_label.setText(self.config.describe(planned))
            self.plan_error.show_message(refused)
            self.run_button.setEnabled(False)
            return
        self.plan_error.show_message("")
        data = self.controller.dataset.data
        notes = [n for n in (metric_cost_note(self.registry, self.config.metrics, data, len(planned)), memory) if n]
        # a hierarchy the user attached is never ignored silently: say which a method will not use
        unused = dict.fromkeys(
            n
            for run in planned
            for n in unused_hierarchies(self.registry, data, run.spec.method, run.spec.models, run.spec.aggregates)
        )
        notes += [f"Note: {n[:1].upper()}{n[1:]}." for n in unused]
        self.plan_label.setText("\n".join([self.config.describe(planned), *notes]))
        self.run_button.setEnabled(True)

    # -- for tests and scripts ------------------------------------------------------------------
    def choose(
        self,
        model: str | None,
        methods: list[str],
        *,
        sweep: dict[str, str] | None = None,
        values: dict | None = None,
        metrics: list[str] | None = None,
        also: dict | None = None,
    ) -> None:
        """Set the panel as a user would: the model (and ``also``: further models with their values,
        ticked under "Also require"), tick the methods, fill sweeps and values."""
        self.model_combo.setCurrentIndex(0 if model is None else self.model_combo.findData(model))
        for name, check in self.also_checks.items():
            check.setChecked(name in (also or {}))
        for name, fields in (also or {}).items():
            for key, value in fields.items():
                self.also_forms[name].field(key).set(value)
        for name, row in self.rows.items():
            row.check.setChecked(name in methods)
        for key, value in (values or {}).items():
            for form in self._forms_declaring(key):
                form.field(key).set(value)
        for key, text in (sweep or {}).items():
            forms = self._forms_declaring(key)
            if not forms:
                raise BadInput(f"no chosen plugin declares {key!r}")
            forms[0].set_sweep(key, text)
        if metrics is not None:
            for name, check in self.metric_boxes.items():
                check.setChecked(name in metrics)

    def _forms_declaring(self, key: str) -> list[ParamForm]:
        forms = [self.model_form] if self.model_form is not None else []
        forms += [r.form for n, r in self.rows.items() if n in self.config.selected]
        return [f for f in forms if key in f.names()]
