"""Keep the most common features first, each while the privacy model allows it."""

from dataclasses import dataclass

import numpy as np

from veil.engine import BINARY, Algorithm, Judgement, feature_subset, hookimpl, param


@dataclass(frozen=True)
class Params:
    top: int = param(10, minimum=1, help="keep at most this many features")


class CommonFirst(Algorithm):
    name = "common-first"
    title = "Most common features first"
    description = "Tries the features from the most to the least held, keeping each the privacy model allows."
    paper = ""  # a method of no paper (a third-party method cites its own here)
    accepts = (BINARY,)  # a table is binarised by the run's recipe first
    satisfies = (Judgement.FEATURE_SETS,)  # it asks the model which features may be released together
    Params = Params

    def run(self, data, model, params, ctx):
        order = np.argsort(-data.column_counts(), kind="stable")
        rule = model.selection_constraint(data) if model else None
        chosen = []
        for i, f in enumerate(order):
            ctx.progress(i / len(order), "choosing features")  # also where a cancel stops the run
            if len(chosen) == params.top:
                break
            if rule is None or rule.feasible(int(f)):
                if rule is not None:
                    rule.add(int(f))
                chosen.append(int(f))
        return feature_subset(data, chosen, notes=(f"{len(chosen)} features kept",))


@hookimpl
def veil_register_algorithms():
    return [CommonFirst]
