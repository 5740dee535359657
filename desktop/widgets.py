"""Small reusable widgets: delegates for combo-box cells and progress bars, a histogram, a
red message label, and table-view set-up that stays fast on 100,000 rows."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from .models import CHOICES, FRACTION

ERROR_COLOUR = "#b00020"


class ComboDelegate(QStyledItemDelegate):
    """Edits a cell with a combo box of the values the model offers under ``CHOICES``."""

    def createEditor(self, parent, option, index):
        choices = index.data(CHOICES)
        if not choices:
            return super().createEditor(parent, option, index)
        combo = QComboBox(parent)
        combo.addItems([str(c) for c in choices])
        combo.activated.connect(lambda _=None, c=combo: self._commit(c))
        return combo

    def _commit(self, combo: QComboBox) -> None:
        self.commitData.emit(combo)
        self.closeEditor.emit(combo)

    def setEditorData(self, editor, index):
        if isinstance(editor, QComboBox):
            editor.setCurrentText(str(index.data(Qt.EditRole)))
        else:
            super().setEditorData(editor, index)

    def setModelData(self, editor, model, index):
        if isinstance(editor, QComboBox):
            if editor.currentText() != str(index.data(Qt.EditRole)):
                model.setData(index, editor.currentText(), Qt.EditRole)
        else:
            super().setModelData(editor, model, index)


class ProgressDelegate(QStyledItemDelegate):
    """Paints a progress bar from the model's ``FRACTION``."""

    def paint(self, painter, option, index):
        fraction = index.data(FRACTION)
        if fraction is None:
            return super().paint(painter, option, index)
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 3, -2, -3)
        bar.minimum, bar.maximum = 0, 1000
        bar.progress = int(round(1000 * fraction))
        bar.text = index.data(Qt.DisplayRole)
        bar.textVisible = True
        bar.state = option.state
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawControl(QStyle.CE_ProgressBar, bar, painter, option.widget)


class Histogram(QWidget):
    """Bars of (label, count): vertical for a numeric column's bins, horizontal with labels for
    categories. Painted directly, so it is crisp at any screen scale."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._bars: tuple[tuple[str, int], ...] = ()
        self._numeric = False
        self._caption = ""
        self.setMinimumHeight(110)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def set_bars(self, bars, numeric: bool, caption: str = "") -> None:
        self._bars, self._numeric, self._caption = tuple(bars), numeric, caption
        self.updateGeometry()
        self.update()

    def sizeHint(self):
        rows = len(self._bars) if not self._numeric else 6
        return QSize(260, max(110, 18 * rows + 24))

    def paintEvent(self, event):
        if not self._bars:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        fm = QFontMetrics(self.font())
        bar_colour = self.palette().color(QPalette.Highlight)
        text_colour = self.palette().color(QPalette.WindowText)
        top = max(c for _, c in self._bars) or 1
        r = self.rect().adjusted(4, 4, -4, -4)
        if self._numeric:
            self._paint_columns(p, fm, r, top, bar_colour, text_colour)
        else:
            self._paint_rows(p, fm, r, top, bar_colour, text_colour)
        p.end()

    def _paint_columns(self, p, fm, r, top, bar_colour, text_colour):
        axis = r.bottom() - fm.height() - 2
        width = r.width() / len(self._bars)
        for i, (_, count) in enumerate(self._bars):
            h = (axis - r.top()) * count / top
            p.fillRect(QRectF(r.left() + i * width + 1, axis - h, max(width - 2, 1), h), bar_colour)
        p.setPen(text_colour)
        first, last = self._bars[0][0].split("–")[0], self._bars[-1][0].split("–")[-1]
        p.drawText(r.left(), r.bottom(), first)
        p.drawText(r.right() - fm.horizontalAdvance(last), r.bottom(), last)
        if self._caption:
            mid = (r.width() - fm.horizontalAdvance(self._caption)) / 2
            p.drawText(int(r.left() + mid), r.bottom(), self._caption)

    def _paint_rows(self, p, fm, r, top, bar_colour, text_colour):
        row_h = fm.height() + 3
        bars = self._bars[: max(int(r.height() // row_h), 1)]  # as many as fit, largest first
        label_w = min(max(fm.horizontalAdvance(lbl) for lbl, _ in bars) + 8, r.width() // 2)
        count_w = fm.horizontalAdvance(f"{top:,}") + 8
        p.setPen(text_colour)
        for i, (label, count) in enumerate(bars):
            y = r.top() + i * row_h
            shown = fitted_label(fm, label, label_w - 8)
            p.drawText(QRectF(r.left() - 2, y, label_w - 6, row_h), Qt.AlignRight | Qt.AlignVCenter, shown)
            w = (r.width() - label_w - count_w) * count / top
            p.fillRect(QRectF(r.left() + label_w, y + 2, max(w, 1), row_h - 4), bar_colour)
            p.drawText(
                QRectF(r.left() + label_w + w + 4, y, count_w, row_h), Qt.AlignLeft | Qt.AlignVCenter, f"{count:,}"
            )


def fitted_label(fm: QFontMetrics, label: str, width: int) -> str:
    """``label`` as it fits in ``width`` pixels: whole when its advance fits, else elided. (Qt's
    ``elidedText`` measures more finely than ``horizontalAdvance`` and elides some labels at their
    own width: "12" became "…", so a column of short codes showed no value at all.)"""
    if fm.horizontalAdvance(label) <= width:
        return label
    return fm.elidedText(label, Qt.ElideRight, width)


class ErrorLabel(QLabel):
    """A red, wrapping message that hides itself when empty."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {ERROR_COLOUR};")
        self.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.hide()

    def show_message(self, text: str) -> None:
        self.setText(text)
        self.setVisible(bool(text))


def fast_table(view: QTableView, *, stretch_last: bool = True) -> QTableView:
    """Fixed row heights and no size-to-contents, so a view never measures every row (a
    100,000-row model only formats the cells on screen)."""
    view.setWordWrap(False)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectRows)
    view.setHorizontalScrollMode(QAbstractItemView.ScrollPerPixel)
    rows = view.verticalHeader()
    rows.setSectionResizeMode(QHeaderView.Fixed)
    rows.setDefaultSectionSize(view.fontMetrics().height() + 8)
    view.horizontalHeader().setStretchLastSection(stretch_last)
    view.horizontalHeader().setHighlightSections(False)
    return view


def fit_columns(view: QTableView, sample_rows: int = 50, max_width: int = 260) -> None:
    """Size columns to their header and the first rows only (never the whole model)."""
    model, fm = view.model(), view.fontMetrics()
    if model is None:
        return
    rows = min(model.rowCount(), sample_rows)
    for c in range(model.columnCount()):
        texts = [str(model.headerData(c, Qt.Horizontal) or "")]
        texts += [str(model.index(r, c).data() or "") for r in range(rows)]
        view.setColumnWidth(c, min(max(fm.horizontalAdvance(t) for t in texts) + 24, max_width))


def muted(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    palette = label.palette()
    palette.setColor(QPalette.WindowText, QColor("#5f6368"))
    label.setPalette(palette)
    return label


class FigureArea(QWidget):
    """A matplotlib figure of ``figsize`` inches, made when first drawn on (matplotlib's Qt backend is
    imported only then, so a tab never shown costs nothing)."""

    def __init__(self, figsize: tuple[float, float], parent=None):
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._figsize = figsize
        self._figure = self._canvas = None

    def plot(self):
        """(figure, canvas), made on the first call."""
        if self._canvas is None:
            from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
            from matplotlib.figure import Figure

            self._figure = Figure(figsize=self._figsize, layout="constrained")
            self._canvas = FigureCanvasQTAgg(self._figure)
            self._layout.addWidget(self._canvas, 1)
        return self._figure, self._canvas

    def clear(self) -> None:
        """Empty the figure, if one was made."""
        if self._figure is not None:
            self._figure.clear()
            self._canvas.draw_idle()
