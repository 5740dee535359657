"""(α, k)-anonymity: every group of records alike holds at least k records, and no sensitive value
makes up more than a share α of any group."""

from dataclasses import dataclass

from veil.engine import GroupVerdict, Judgement, PrivacyModel, hookimpl, param


@dataclass(frozen=True)
class Params:
    k: int = param(5, minimum=1, help="the fewest records a group may hold")
    alpha: float = param(0.5, minimum=0, maximum=1, help="the largest share of a group one sensitive value may take")


class AlphaKAnonymity(PrivacyModel):
    name = "alpha-k-anonymity"
    title = "(α, k)-anonymity"
    description = "Groups of at least k records, in none of which one sensitive value takes more than a share α."
    paper = "Wong, Li, Fu and Wang, (α, k)-anonymity, KDD 2006"
    Params = Params
    judges = (Judgement.GROUPS,)  # judged group by group: Mondrian, global recoding and Hilbert work under it
    judges_groups = True  # check(release) comes for free: the engine builds the groups
    needs_sensitive = True  # judged on each column marked sensitive
    higher_is_safer = False  # its value is a share, and a smaller one is safer
    measure = "largest share of one sensitive value"

    def check_groups(self, view, params):
        # view holds some groups of records: all of a release's, or the parts of one cut Mondrian tries
        share = view.counts().max(axis=1) / view.sizes
        return GroupVerdict(share, (view.sizes >= params.k) & (share <= params.alpha), higher_is_safer=False)

    def monotonicity(self, params):
        return "generalisation"  # groups that pass still pass merged: global recoding may prune


@hookimpl
def veil_register_privacy_models():
    return [AlphaKAnonymity]
