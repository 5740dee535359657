"""Screenshots of the main window in each state of the everyday flow, for the README.

Run under a real X server::

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x900x24" .venv/bin/python scripts/screenshot.py [OUT_DIR]

States: the demo opened, roles set, the feature recipe, the configuration, a run in progress,
results with a chart (and the privacy–utility frontier), the export dialog, the E(S) ranking of
privacy-aware candidate subsets with its weight sliders. With ``--mondrian``: Mondrian in the
configuration panel, the release preview and a hierarchy opened from it (10–12). With
``--solution-space``: global recoding's solution space on ARX's adult.csv, its table sorted by
loss, and the first chart after its runs, loss against suppression (14, 15). With
``--hierarchies``: ARX's folder of hierarchy files matched to adult.csv's columns, and a hierarchy's
tree (16, 17). With ``--cells``: the release preview of local suppression and of microaggregation on
the demo, the cells each changed tinted (18, 19). Settings go to a
temporary folder, so the developer's own are neither read nor changed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("VEIL_SETTINGS_DIR", tempfile.mkdtemp(prefix="veil-shots-"))

from PySide6.QtCore import QEventLoop, Qt, QTimer  # noqa: E402

from veil.desktop.app import MainWindow, create_app  # noqa: E402
from veil.engine import make_registry  # noqa: E402


def pump(ms: int = 300) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait(signal, timeout_ms: int = 120_000) -> None:
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def wait_until(predicate, timeout_s: float = 60) -> None:
    end = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < end:
        pump(50)


def shoot(app, out: Path, name: str) -> Path:
    pump(400)
    path = out / f"{name}.png"
    app.primaryScreen().grabWindow(0).save(str(path))
    print(path)
    return path


def open_window(out_dir: str, size=(1500, 950), demo: bool = True):
    """(the application, a main window of ``size`` at the screen's corner, the output folder made):
    the demo data loaded unless ``demo`` is false."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = create_app([])
    window = MainWindow(make_registry())
    window.confirm_unsaved = False
    window.move(0, 0)
    window.resize(*size)
    window.show()
    if demo:
        window.controller.open_demo()
        wait(window.controller.data_loaded)
    return app, window, out


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = create_app()
    registry = make_registry()
    window = MainWindow(registry)
    window.move(0, 0)
    window.resize(1400, 900)
    window.show()
    c = window.controller
    c.open_demo()
    wait(c.data_loaded)
    shoot(app, out, "01-demo-opened")

    dataset = window.dataset_panel
    c.dataset.set_roles(["age", "admission_month"], "insensitive")
    row = c.dataset.table.columns.index("postcode_district")
    dataset.columns_view.selectRow(row)
    dataset.set_roles(["postcode_district"], "insensitive")
    dataset.columns_view.selectRow(c.dataset.table.columns.index("age"))
    shoot(app, out, "02-roles-set")

    dataset.tabs.setCurrentIndex(1)
    c.dataset.set_rule("age", "cuts", cuts=[40, 65, 80])
    shoot(app, out, "03-feature-recipe")
    dataset.tabs.setCurrentIndex(0)

    greedy = "greedy-distcnt" in registry.names("algorithm") and "k-ac" in registry.names("privacy-model")
    if greedy:
        c.dataset.set_roles(["age", "postcode_district", "admission_month", "marital_status"], "insensitive")
        methods = [m for m in ("greedy-distcnt", "greedy-hamdist") if m in registry.names("algorithm")]
        window.config_panel.choose("k-ac", methods, sweep={"k": "5, 8, 11"}, metrics=["auc", "sfc"])
    else:
        window.config_panel.choose(
            "k-anonymity", ["all-features"], sweep={"k": "2, 5, 10, 20"}, metrics=["auc", "sfc", "min-group-size"]
        )
    shoot(app, out, "04-configuration")

    c.run()
    wait_until(lambda: any(e.status == "running" and e.fraction > 0.2 for e in c.runs.entries) or c.runner.is_idle())
    shoot(app, out, "05-run-in-progress")

    if not c.runner.is_idle():
        wait(c.batch_finished)
    window.chart_panel.chooser.setCurrentIndex(window.chart_panel.chooser.findData("metric-bars"))
    shoot(app, out, "06-results-and-chart")
    window.chart_panel.chooser.setCurrentIndex(window.chart_panel.chooser.findData("privacy-utility"))
    shoot(app, out, "07-privacy-utility-frontier")

    window.actions.export_release(None)
    shoot(app, out, "08-export-dialog")
    window.actions.dialog.reject()

    if "privacy-aware-candidates" in registry.names("algorithm"):
        shoot_ranking(app, out, window)
    window.close()
    return 0


def shoot_ranking(app, out: Path, window) -> None:
    """Privacy-aware candidate subsets on the demo (SA diagnosis_group, C readmitted_30d, from the
    roles), evaluated on 300 sampled records; then the E(S) weights moved to (0.5, 0.25, 0.25)."""
    c, panel = window.controller, window.config_panel
    panel.choose(
        None,
        ["privacy-aware-candidates"],
        values={"sample_rows": 300, "folds": 5},
        metrics=["cv-accuracy", "pbi", "sfc"],
    )
    c.run()
    wait(c.batch_finished)
    row = panel.rows["privacy-aware-candidates"]
    row.sliders.sliders[0].setValue(500)
    panel.ensureWidgetVisible(row.sliders, 0, 120)
    window.runs_panel.results_view.scrollToBottom()
    shoot(app, out, "09-es-ranking")


def shoot_mondrian(out_dir: str) -> int:
    """Mondrian from the configuration panel (l-diversity, l swept over 2, 3, 4), the release preview
    of the l = 3 run, and a quasi-identifier's hierarchy opened from the preview."""
    app, window, out = open_window(out_dir, (1400, 900))  # noqa: RUF059  (app kept alive for the window)
    c, panel = window.controller, window.config_panel
    panel.choose("l-diversity", ["mondrian"], sweep={"l": "2, 3, 4"}, metrics=["average-class-size", "ploss"])
    pump(300)  # the ticked method's form is laid out before the panel scrolls to it
    panel.ensureWidgetVisible(panel.rows["mondrian"].form, 0, 40)
    shoot(app, out, "10-mondrian-configuration")
    c.run()
    wait(c.batch_finished)
    done = [e for e in c.batch if e.outcome is not None and e.outcome.result is not None]
    window.runs_panel.select_run(done[1].id if len(done) > 1 else done[-1].id)
    window.tabs.setCurrentWidget(window.release_panel)
    shoot(app, out, "11-release-preview")
    preview = window.release_panel
    preview.hierarchy_column.setCurrentIndex(max(0, preview.hierarchy_column.findText("marital_status")))
    preview.hierarchy_button.click()
    shoot(app, out, "12-hierarchy-from-preview")
    window.dataset_panel.hierarchy_dialog.reject()
    window.close()
    return 0


def shoot_solution_space(out_dir: str) -> int:
    """Global recoding on ARX's adult.csv with ARX's hierarchies (nine quasi-identifiers, k = 5, 4 %
    suppression; reads ../shared/datasets): its solution space, the optimum chosen."""
    from veil.engine import DataSource

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    datasets = os.environ.get("VEIL_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets"
    folder = Path(datasets) / "adult_arx"  # VEIL_DATASETS: where ../shared/datasets is elsewhere
    qis = [
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
        "salary-class",
    ]
    source = DataSource.from_dict(
        {
            "path": str(folder / "adult.csv"),
            "quasi_identifiers": qis,
            "hierarchies": {q: str(folder / f"adult_hierarchy_{q}.csv") for q in qis},
        }
    )
    app = create_app()  # noqa: F841  (the application must outlive the window)
    window = MainWindow(make_registry())
    window.move(0, 0)
    window.resize(1500, 950)
    window.show()
    c = window.controller
    c.error.connect(lambda title, text, _detail: print(f"{title}: {text}", file=sys.stderr))
    c.open_source(source)
    wait(c.data_loaded, 900_000)
    metrics = ["loss", "suppressed", "average-class-size", "min-group-size"]
    for values in (
        {"k": 5, "suppression": 0.04},
        {"k": 5, "suppression": 0.1},
        {"k": 5, "suppression": 0.04, "metric": "arx-loss", "weights": "age:2;education:2", "max_levels": "age:3"},
    ):
        window.config_panel.choose("k-anonymity", ["global-recoding"], values=values, metrics=metrics)
        if not c.run():
            return 1  # the controller said why in its error signal
        wait(c.batch_finished, 900_000)
    window.runs_panel.select_run(c.runs.entries[-1].id)
    window.tabs.setCurrentWidget(window.lattice_view)
    view = window.lattice_view
    view.table.sortByColumn(view.model.headers().index(view.space.metric), Qt.AscendingOrder)
    view.status_filter.setCurrentText("solutions")
    pump(500)
    view.grab().save(str(out / "14-solution-space.png"))  # the view alone, whatever the screen's size
    print(out / "14-solution-space.png")
    window.tabs.setCurrentWidget(window.chart_panel)  # the chart global recoding's runs answer with
    pump(800)
    window.chart_panel.grab().save(str(out / "15-loss-against-suppression.png"))
    print(out / "15-loss-against-suppression.png")
    window.close()
    return 0


def shoot_hierarchies(out_dir: str) -> int:
    """ARX's adult.csv opened bare, its folder of ARX hierarchy files matched to the columns (16),
    and one attached hierarchy's tree in the resizable dialog (17). Reads ../shared/datasets."""
    from veil.engine import DataSource

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    datasets = os.environ.get("VEIL_DATASETS") or Path(__file__).resolve().parents[2] / "shared" / "datasets"
    folder = Path(datasets) / "adult_arx"
    app = create_app()  # noqa: F841  (the application must outlive the window)
    window = MainWindow(make_registry())
    window.move(0, 0)
    window.resize(1400, 900)
    window.show()
    c = window.controller
    c.open_source(DataSource.from_dict({"path": str(folder / "adult.csv")}))
    wait(c.data_loaded)
    dialog = window.dataset_panel.load_hierarchy_folder(str(folder))
    pump(500)
    dialog.grab().save(str(out / "16-hierarchies-from-folder.png"))
    print(out / "16-hierarchies-from-folder.png")
    dialog.accept()
    pump(300)
    window.dataset_panel.edit_hierarchy("education")
    tree = window.dataset_panel.hierarchy_dialog
    pump(500)
    tree.grab().save(str(out / "17-hierarchy-tree.png"))
    print(out / "17-hierarchy-tree.png")
    tree.reject()
    window.close()
    return 0


def shoot_cells(out_dir: str) -> int:
    """Local suppression and microaggregation (k = 5) on the demo: each release preview, the cells the
    method blanked or aggregated tinted, with the legend."""
    app, window, out = open_window(out_dir, (1400, 900))  # noqa: RUF059  (app kept alive for the window)
    c, panel = window.controller, window.config_panel
    panel.choose("k-anonymity", ["local-suppression", "microaggregation"], values={"k": 5})
    c.run()
    wait(c.batch_finished)
    done = {e.planned.spec.method.name: e for e in c.batch if e.outcome is not None and e.outcome.result is not None}
    window.tabs.setCurrentWidget(window.release_panel)
    for name, shot in (
        ("local-suppression", "20-preview-blanked-cells"),
        ("microaggregation", "21-preview-aggregated"),
    ):
        if name in done:
            window.runs_panel.select_run(done[name].id)
            shoot(app, out, shot)
        else:
            print(f"{name}: no release", [e.status_text() for e in c.batch])
    window.close()
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    where = args[0] if args else "docs/screenshots"
    if "--solution-space" in sys.argv:
        sys.exit(shoot_solution_space(where))
    if "--hierarchies" in sys.argv:
        sys.exit(shoot_hierarchies(where))
    if "--cells" in sys.argv:
        sys.exit(shoot_cells(where))
    sys.exit(shoot_mondrian(where) if "--mondrian" in sys.argv else main(where))
