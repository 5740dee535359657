"""One dot per run: a metric's value, run by run."""

from dataclasses import dataclass

from veil.engine import BadInput, Chart, hookimpl, param


@dataclass(frozen=True)
class Params:
    metric: str = param("sfc", help="the metric on the y axis")


class MetricDots(Chart):
    name = "metric-dots"
    title = "Metric per run (dots)"
    description = "One dot per run and repeat."
    paper = ""
    Params = Params

    def draw(self, results, figure, params):
        rows = results[results["metric"] == params.metric]
        if rows.empty:
            raise BadInput(f"no results for metric {params.metric!r}")
        ax = figure.add_subplot()
        ax.plot(rows["run"], rows["value"], "o")
        ax.set_xlabel("run")
        ax.set_ylabel(params.metric)


@hookimpl
def veil_register_charts():
    return [MetricDots]
