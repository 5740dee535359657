"""Forms generated from a plugin's parameter declaration (its ``Params`` dataclass).

int → spin box within the declared bounds; float → line edit (any precision, e.g. ε = 0.001);
choices → combo box; bool → check box; str → line edit (or an editable combo with suggestions).
The help text is the tooltip. Beside each sweepable number a second field takes a list such as
``5, 8, 11``: one run per value. Every value is checked by the engine's own parameter parsing,
and its sentence is shown in red under the field. Under the fields, the plugin's ``hint`` of the
values (what they imply, e.g. the class size a privacy budget gives) follows the edits: it is
computed on a background thread after a pause in the typing (the GUI thread never waits for it),
"computing…" is shown when it takes a moment, and a result for values since changed is dropped.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from contextlib import contextmanager

from PySide6.QtCore import QObject, QRunnable, QSignalBlocker, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QGridLayout, QLabel, QLineEdit, QSpinBox, QWidget

from veil.engine import BadInput, ParamSpec

from .widgets import ErrorLabel, muted

INT_LIMIT = 2**31 - 1
SWEEP_HINT = "sweep, e.g. 5, 8, 11"
HINT_DELAY_MS = 150  # the pause in the edits after which the plugin's hint is computed
HINT_BUSY_MS = 100  # how long a hint may take before the form says it is computing it
COMPUTING = "computing…"
_hint_pool: QThreadPool | None = None


def hint_pool() -> QThreadPool:
    """The one background thread every form's hints are computed on, in the order asked: a hint
    asked for values already changed is skipped when its turn comes, so a stale computation delays
    the current one by at most the one already running."""
    global _hint_pool
    if _hint_pool is None:
        _hint_pool = QThreadPool()
        _hint_pool.setMaxThreadCount(1)
        _hint_pool.setExpiryTimeout(-1)
    return _hint_pool


class _HintRelay(QObject):
    """Carries a hint computed on the pool's thread to its form on the GUI thread (a queued signal)."""

    computed = Signal(int, str)


class _HintJob(QRunnable):
    """``plugin.hint(params)`` on the pool's thread, unless the form asked for newer values since.
    ``latest`` (a one-item list the form updates) holds the number of the newest request."""

    def __init__(self, relay: _HintRelay, latest: list, number: int, plugin, params):
        super().__init__()
        self.relay, self.latest, self.number, self.plugin, self.params = relay, latest, number, plugin, params

    def run(self) -> None:
        if self.latest[0] != self.number:
            return  # the values changed before its turn came
        try:
            text = self.plugin.hint(self.params)
        except BadInput as exc:
            text = str(exc)
        except Exception as exc:  # a defect in a plugin's hint must not leave the form waiting
            text = f"(no hint: {type(exc).__name__}: {exc})"
        try:
            self.relay.computed.emit(self.number, text)
        except RuntimeError:  # the form was closed meanwhile
            pass


def parse_list(text: str, spec: ParamSpec) -> list:
    """The values of a sweep field (comma- or semicolon-separated), each checked like the field."""
    items = [t.strip() for t in text.replace(";", ",").split(",") if t.strip()]
    values = []
    for item in items:
        v = spec.convert(item)
        if v not in values:
            values.append(v)
    return values


def sweepable(spec: ParamSpec) -> bool:
    return spec.sweepable and spec.type in (int, float) and not spec.choices


def _show(value) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


class _Field:
    """The widgets of one parameter: its editor, its optional sweep field and its message."""

    def __init__(self, spec: ParamSpec, sweep: bool, suggestions: list[str] | None):
        self.spec = spec
        self.editor = self._editor(spec, suggestions)
        tip = spec.help + (f" ({spec.describe_bounds()})" if spec.describe_bounds() else "")
        self.editor.setToolTip(tip)
        self.sweep: QLineEdit | None = None
        if sweep and sweepable(spec):
            self.sweep = QLineEdit(placeholderText=SWEEP_HINT)
            self.sweep.setToolTip(
                f"Several values of {spec.title}, separated by commas: one run per value. "
                "Leave empty to use the single value."
            )
            self.sweep.setObjectName(f"sweep-{spec.name}")
        self.error = ErrorLabel()
        self.editor.setObjectName(f"param-{spec.name}")
        self.label = QLabel(spec.title)
        self.label.setToolTip(self.editor.toolTip())
        self.label.setBuddy(self.editor)
        self.hidden = False  # shown by another widget (see ParamForm.embed)

    def widgets(self) -> list[QWidget]:
        return [w for w in (self.label, self.editor, self.sweep, self.error) if w is not None]

    @staticmethod
    def _editor(spec: ParamSpec, suggestions):
        if spec.choices:
            combo = QComboBox()
            for c in spec.choices:
                combo.addItem(str(c), c)
            combo.setCurrentIndex(max(list(spec.choices).index(spec.default), 0) if spec.default in spec.choices else 0)
            return combo
        if spec.type is bool:
            box = QCheckBox()
            box.setChecked(bool(spec.default))
            return box
        if spec.type is int and not spec.optional:
            spin = QSpinBox()
            lo = -INT_LIMIT if spec.minimum is None else int(spec.minimum) + (1 if spec.exclusive_minimum else 0)
            hi = INT_LIMIT if spec.maximum is None else int(spec.maximum)
            spin.setRange(max(lo, -INT_LIMIT), min(hi, INT_LIMIT))
            spin.setValue(int(spec.default))
            spin.setAccelerated(True)
            return spin
        if spec.type is str and suggestions is not None:
            combo = QComboBox()
            combo.setEditable(True)
            combo.addItems(suggestions)
            combo.setCurrentText(_show(spec.default))
            combo.lineEdit().setPlaceholderText(spec.help if spec.default in ("", None) else "")
            return combo
        edit = QLineEdit(_show(spec.default))
        if spec.optional:
            edit.setPlaceholderText("none")
        elif spec.default == "":
            edit.setPlaceholderText(spec.help)
        return edit

    def raw(self):
        e = self.editor
        if isinstance(e, QSpinBox):
            return e.value()
        if isinstance(e, QCheckBox):
            return e.isChecked()
        if isinstance(e, QComboBox):
            return e.currentData() if not e.isEditable() else e.currentText()
        text = e.text().strip()
        return None if text == "" and self.spec.optional else text

    def set(self, value) -> None:
        e = self.editor
        if isinstance(e, QSpinBox):
            e.setValue(int(value))
        elif isinstance(e, QCheckBox):
            e.setChecked(bool(value))
        elif isinstance(e, QComboBox) and not e.isEditable():
            i = e.findData(value)
            e.setCurrentIndex(i if i >= 0 else e.currentIndex())
        elif isinstance(e, QComboBox):
            e.setCurrentText(_show(value))
        else:
            e.setText(_show(value))

    def check(self) -> tuple[object, list | None, str]:
        """(value, sweep values or None, message) — the message is empty when both are valid."""
        value, values, message = None, None, ""
        try:
            value = self.spec.convert(self.raw())
        except BadInput as exc:
            message = str(exc)
        if self.sweep is not None and self.sweep.text().strip():
            try:
                values = parse_list(self.sweep.text(), self.spec)
            except BadInput as exc:
                message = f"sweep: {exc}"
        self.editor.setEnabled(not (self.sweep is not None and self.sweep.text().strip()))
        return value, values, message


class ParamForm(QWidget):
    """The form of one plugin's parameters; ``changed`` after every edit, once it was checked."""

    changed = Signal()
    hint_shown = Signal(str)  # the hint's text ("" hidden), on the GUI thread, each time it changes

    def __init__(
        self, plugin_cls, *, sweep: bool = True, suggestions: Mapping[str, list[str]] | None = None, parent=None
    ):
        super().__init__(parent)
        self.plugin = plugin_cls
        self._fields: dict[str, _Field] = {}
        self._errors: dict[str, str] = {}
        self._values: dict = {}
        self._sweeps: dict[str, list] = {}
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(2)
        specs = plugin_cls.param_specs()
        if not specs:
            grid.addWidget(muted("No parameters."), 0, 0, 1, 3)
        for i, spec in enumerate(specs):
            f = _Field(spec, sweep, (suggestions or {}).get(spec.name))
            self._fields[spec.name] = f
            grid.addWidget(f.label, 2 * i, 0)
            grid.addWidget(f.editor, 2 * i, 1, 1, 1 if f.sweep else 2)
            if f.sweep:
                grid.addWidget(f.sweep, 2 * i, 2)
            grid.addWidget(f.error, 2 * i + 1, 0, 1, 3)
            self._connect(f)
        self.form_error = ErrorLabel()
        grid.addWidget(self.form_error, 2 * len(specs) + 1, 0, 1, 3)
        self.hint = muted("")
        self.hint.setObjectName("param-hint")
        self.hint.hide()
        grid.addWidget(self.hint, 2 * len(specs) + 2, 0, 1, 3)
        self._hinted = None  # the parameters the hint is for
        self._hint_timer = QTimer(self, singleShot=True, interval=HINT_DELAY_MS)
        self._hint_timer.timeout.connect(self._ask_hint)
        self._busy_timer = QTimer(self, singleShot=True, interval=HINT_BUSY_MS)
        self._busy_timer.timeout.connect(lambda: self._set_hint(COMPUTING))
        self._hint_numbers = itertools.count(1)
        self._latest_hint = [0]  # the newest request's number, read by the jobs on the pool's thread
        self._hint_relay = _HintRelay(self)
        self._hint_relay.computed.connect(self._hint_computed)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(2, 1)
        self.validate()

    def _connect(self, f: _Field) -> None:
        e = f.editor
        signal = (
            e.valueChanged
            if isinstance(e, QSpinBox)
            else e.toggled
            if isinstance(e, QCheckBox)
            else e.currentTextChanged
            if isinstance(e, QComboBox)
            else e.textChanged
        )
        signal.connect(self._edited)
        if f.sweep is not None:
            f.sweep.textChanged.connect(self._edited)

    def _edited(self, *_):
        self.validate()
        self.changed.emit()

    # -- reading and writing ----------------------------------------------------------------------
    def validate(self) -> bool:
        """Check every field with the engine's parsing; show each message under its field."""
        self._errors, self._values, self._sweeps = {}, {}, {}
        for name, f in self._fields.items():
            value, values, message = f.check()
            f.error.show_message("" if f.hidden else message)
            if message:
                self._errors[name] = message
                continue
            self._values[name] = value
            if values is not None:
                self._sweeps[name] = values
        whole, params = "", None
        if not self._errors:
            try:
                params = self.plugin.params({**self._values, **{k: v[0] for k, v in self._sweeps.items()}})
            except BadInput as exc:
                whole = str(exc)
        self.form_error.show_message(whole)
        if whole:
            self._errors[""] = whole
        self._hinted = params
        self._latest_hint[0] = next(self._hint_numbers)  # whatever is being computed is now stale
        self._busy_timer.stop()
        if params is None:
            self._set_hint("")
        self._hint_timer.start()  # after a pause in the typing
        return not self._errors

    def _ask_hint(self) -> None:
        """Compute the hint of the current values on the pool's thread (``_hint_computed`` shows it)."""
        if self._hinted is None:
            self._set_hint("")
            return
        number = self._latest_hint[0]
        self._busy_timer.start()
        hint_pool().start(_HintJob(self._hint_relay, self._latest_hint, number, self.plugin, self._hinted))

    def _hint_computed(self, number: int, text: str) -> None:
        if number != self._latest_hint[0]:
            return  # computed for values since changed: a newer request is on its way
        self._busy_timer.stop()
        self._set_hint(text)

    def _set_hint(self, text: str) -> None:
        changed = text != self.hint.text() or bool(text) != self.hint.isVisibleTo(self)
        self.hint.setText(text)
        self.hint.setVisible(bool(text))
        if changed:
            self.hint_shown.emit(text)

    def values(self) -> dict:
        return dict(self._values)

    def sweeps(self) -> dict[str, list]:
        return {k: list(v) for k, v in self._sweeps.items()}

    def errors(self) -> dict[str, str]:
        return dict(self._errors)

    def field(self, name: str) -> _Field:
        return self._fields[name]

    def names(self) -> list[str]:
        return list(self._fields)

    def set_values(self, values: Mapping, sweeps: Mapping | None = None) -> None:
        """Show ``values`` and ``sweeps`` (a sweep field not named is emptied); ``changed`` once."""
        with self._quiet():
            for name, value in values.items():
                if name in self._fields and value is not None:
                    self._fields[name].set(value)
            for name, f in self._fields.items():
                if f.sweep is not None:
                    listed = (sweeps or {}).get(name)
                    f.sweep.setText(", ".join(_show(v) for v in listed) if listed else "")
        self._edited()

    def update_values(self, values: Mapping) -> None:
        """Set several fields together (sweeps untouched); ``changed`` once, so values that are only
        valid together, such as weights summing to 1, are never seen half set."""
        with self._quiet():
            for name, value in values.items():
                self._fields[name].set(value)
        self._edited()

    @contextmanager
    def _quiet(self):
        blockers = [QSignalBlocker(w) for f in self._fields.values() for w in (f.editor, f.sweep) if w is not None]
        try:
            yield
        finally:
            for b in blockers:
                b.unblock()

    def embed(self, widget: QWidget, replacing: Sequence[str]) -> None:
        """Show ``widget`` in place of the fields ``replacing`` (which stay the form's values, set
        through :meth:`update_values`, and can no longer be swept)."""
        grid: QGridLayout = self.layout()
        rows = []
        for name in replacing:
            f = self._fields[name]
            f.hidden = True
            for w in f.widgets():
                w.hide()
            if f.sweep is not None:
                f.sweep.clear()
                f.sweep = None
            rows.append(grid.getItemPosition(grid.indexOf(f.editor))[0])
        grid.addWidget(widget, min(rows), 0, 1, 3)
        self.validate()

    def set_sweep(self, name: str, text: str) -> None:
        f = self._fields[name]
        if f.sweep is None:
            raise BadInput(f"{name} cannot be swept")
        f.sweep.setText(text)

    def set_suggestions(self, name: str, items: list[str]) -> None:
        e = self._fields[name].editor if name in self._fields else None
        if isinstance(e, QComboBox) and e.isEditable():
            current = e.currentText()
            e.blockSignals(True)
            e.clear()
            e.addItems(items)
            e.setCurrentText(current)
            e.blockSignals(False)
