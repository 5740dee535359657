"""The release report: what was released, what it guarantees, its risk and usefulness before and
after, its caveats and fingerprints, as a self-contained HTML file and a PDF.

Every number in the report comes from the manifest (the report is a rendering of it), so the two
can never disagree. ``veil report DIR`` (:func:`regenerate_report`) first recomputes those numbers
from the released file and the input (when the input is still there and unchanged), checks them
against the manifest, re-checks the privacy model on the file, and then renders.

The report is written for a data manager, not a statistician: plain headings, the verdict first,
every figure explained in a sentence. Rendering lives in :mod:`veil.engine.report_render`.
"""

from __future__ import annotations

import dataclasses
import json
import math

from dataclasses import dataclass, field
from pathlib import Path

from .parts import read_parts, with_parts
from .assessment import DEFAULT_RISK_THRESHOLD, ReportOptions, assess, before_release, release_as_written, utility_rows
from ..data.datasource import DataSource
from ..base.errors import BadInput, VeilError
from .manifest import REPORT_FILES, binding as make_binding, binding_text, read_manifest, recorded_inputs
from .staging import plain_name, refuse_overwriting
from .verify import manifest_population, read_released, table_problem, verify_file
from .signing import check as check_signature, made_here
from ..base.io import check_regular, sha256_file
from .staging import Staging
from ..run.jobs import Context
from ..data.recipe import Recipe
from ..model.blanks import BLANK_WORDS
from ..model.release import FEATURE_WEIGHTS
from ..model.bound import bind_models
from ..run.runs import PluginCall, prepare
from ..data.table import Schema, Table


# -- the document: a small, renderer-neutral structure ---------------------------------------------
@dataclass(frozen=True)
class Num:
    """A number cell: its text, and the manifest key and value it shows (kept in the HTML)."""

    text: str
    key: str = ""
    value: float | int | None = None


@dataclass
class Block:
    kind: str  # "p", "facts", "table", "list", "code", "chart"
    content: object
    header: list | None = None
    caption: str = ""


@dataclass
class Section:
    heading: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, kind: str, content, **kw) -> Section:
        self.blocks.append(Block(kind, content, **kw))
        return self


@dataclass
class Headline:
    status: str  # "holds", "fails", "none", "changed"
    headline: str
    lines: list[str]


@dataclass
class Document:
    title: str
    subtitle: str
    verdict: Headline
    sections: list[Section]
    charts: dict  # chart name ("risk", "utility") -> the manifest figures it draws
    meta: dict = field(default_factory=dict)


# -- building the document from a manifest -------------------------------------------------------------
FILLED = {"value": "kept as a value of its own", "impute": "imputed (median or most frequent value)"}


def build_document(registry, manifest: dict, checks: dict | None = None) -> Document:
    """The report's content, from a manifest (and, when regenerated, the checks just made)."""
    checks = checks or {}
    out = manifest.get("output", {})
    created = manifest.get("created", "")
    parts = _parts(manifest)
    shown = (
        f"{out.get('path', '?')}"
        if len(parts) < 2
        else f"{parts[0].get('path')} and {_count(len(parts) - 1, 'more part')}"
    )
    doc = Document(
        "Release report",
        f"{shown} — exported {_when(created)} with Veil {manifest.get('veil_version') or '?'}",
        _verdict(registry, manifest, checks),
        [],
        {},
        {"file": shown, "veil_version": manifest.get("veil_version") or ""},
    )
    doc.sections += [_released(registry, manifest), _risk_section(manifest, doc)]
    sample = (manifest.get("risk") or {}).get("sample") or {}
    if sample.get("before") or sample.get("after"):  # survey microdata: a weight or household column marked
        doc.sections.append(_sample_section(sample))
    doc.sections.append(_utility_section(registry, manifest, doc))
    if manifest.get("privacy_budget"):
        doc.sections.append(_budget_section(manifest))
    doc.sections += [_caveats(registry, manifest), _parameters(registry, manifest), _fingerprints(manifest, checks)]
    return doc


def _verdict(registry, manifest: dict, checks: dict) -> Headline:
    pm = manifest.get("privacy_model") or {}
    v = manifest.get("verdict") or {}
    lines = []
    budget = manifest.get("privacy_budget")
    if budget:
        lines.append(f"Differential privacy: the method spent a privacy budget of ε = {_g(budget['epsilon_spent'])}.")
    if checks.get("release") in ("changed", "missing"):
        return Headline(
            "changed",
            f"The released file {_release_state(checks['release'])}: this report cannot vouch for it.",
            ["The figures below are those recorded when it was exported."] + lines,
        )
    if not pm.get("name") and manifest.get("release_kind") == FEATURE_WEIGHTS:
        headline = "Feature weights, not records: no record was released." + (
            f" The weights are ε = {_g(budget['epsilon_spent'])}-differentially private."
            if budget
            else " The weights make no privacy claim."
        )
        return Headline(
            "none",
            headline,
            lines
            + [
                "The file holds one row per feature (its weight and rank). "
                "Differential privacy's assumptions are listed below."
                if budget
                else "The weights were computed from every record."
            ],
        )
    if not pm.get("name"):
        headline = "No privacy model was chosen: this release makes no privacy claim."
        return Headline(
            "none",
            headline,
            lines
            + [
                "Nothing was checked. The file may identify people; do not share "
                "it outside the organisation that holds the data."
            ],
        )
    holds = bool(v.get("holds"))
    each = _each_verdict(manifest)
    headline = " ".join(
        explain(registry, e["model"], e.get("params") or {}, bool(e.get("holds")), e.get("value")) for e in each
    )
    if len(each) > 1:
        lines.append(f"The release had to satisfy all {len(each)} privacy models at once.")
        lines += [f"{e['model']}, checked again on {_written(manifest)}: {_finding(e.get('message'))}." for e in each]
    else:
        many = len(_parts(manifest)) > 1
        lines.append(
            f"Checked again on {_written(manifest)}, before {'they' if many else 'it'} took "
            f"{'their names' if many else 'its name'}: {_finding(v.get('message'))}."
        )
    lines += [_by_column(registry, e) for e in each if isinstance(e.get("by_column"), dict) and e["by_column"]]
    recheck = checks.get("recheck")
    if recheck is not None:
        lines.append(f"Checked again now ({checks.get('when', '')}): {recheck}.")
    return Headline("holds" if holds else "fails", headline, lines)


def _parts(manifest: dict) -> list[dict]:
    """The parts of a release written in parts (``output.parts_of``), else []."""
    parts = (manifest.get("output") or {}).get("parts_of")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _written(manifest: dict) -> str:
    n = len(_parts(manifest))
    return f"the {n} parts as written" if n > 1 else "the part as written" if n else "the file as written"


def _by_column(registry, entry: dict) -> str:
    """One model's value on each sensitive column, in one sentence (``by_column`` of its verdict)."""
    try:
        cls = registry.get("privacy-model", entry.get("model"))
    except BadInput:
        cls = None
    measure = (cls.measure if cls is not None else "") or "value"
    title = cls.display_title(entry.get("params") or {}) if cls is not None else entry.get("model")
    each = [
        f"{column}, {measure} {_g(v.get('value'))} ({'holds' if v.get('holds') else 'fails'})"
        for column, v in entry["by_column"].items()
        if isinstance(v, dict)
    ]
    return f"{title}, on each sensitive column: " + "; ".join(each) + "."


def _each_verdict(manifest: dict) -> list[dict]:
    """One entry per privacy model (``verdicts`` of a manifest; its single ``verdict`` before there were several)."""
    listed = manifest.get("verdicts") or []
    if listed:
        return listed
    pm, v = manifest.get("privacy_model") or {}, manifest.get("verdict") or {}
    return [{"model": pm.get("name"), "params": pm.get("params") or {}, **v}]


def explain(registry, model: str, params: dict, holds: bool, value) -> str:
    """One sentence a data holder can read: the model's own ``explain(params, holds, value)`` when
    its plugin has one, else its title and parameters."""
    try:
        cls = registry.get("privacy-model", model)
    except BadInput:
        cls = None
    sentence = cls.explain(params, holds, value) if cls is not None else ""
    if sentence:
        return sentence
    title = cls.display_title(params) if cls is not None else model
    args = ", ".join(f"{k} = {_value_text(v)}" for k, v in params.items())
    return f"{title}{f' with {args}' if args else ''} {'holds' if holds else 'does not hold'}."


def _released(registry, manifest: dict) -> Section:
    out = manifest.get("output", {})
    inp = manifest.get("input", {})
    method = manifest.get("method", {})
    unit = "feature" if manifest.get("release_kind") == FEATURE_WEIGHTS else "record"
    parts = _parts(manifest)
    shape = (
        f"{_fmt_name(registry, out.get('format'))}, {_count(out.get('rows'), unit)}, "
        f"{_count(len(out.get('columns') or []), 'column')}"
    )
    facts = [
        (
            "Released files",
            f"{_count(len(parts), 'part')}, {parts[0].get('path')} to {parts[-1].get('path')} "
            f"({shape}; each part's records and fingerprint are listed at the end)",
        )
        if len(parts) > 1
        else ("Released file", f"{out.get('path')} ({shape})"),
        ("Columns released", _labelled_names(out) or "none"),
        ("Method", f"{_title(registry, 'algorithm', method.get('name'))}{_params_text(_applicable(registry, method))}"),
        *_then_fact(registry, method, titled=True),
        ("Privacy model", _model_fact(registry, manifest)),
    ]
    removed = manifest.get("removed_identifiers") or []
    facts.append(
        (
            "Identifier columns",
            f"removed, never released: {_names(removed)}" if removed else "none were marked in the input",
        )
    )
    features = manifest.get("selected_features")
    target = (manifest.get("roles") or {}).get("target")
    if features is not None and list(features) != [c for c in out.get("columns") or [] if c != target]:
        facts.append(("Features kept", f"{len(features)}: {_names(features)}"))
    if manifest.get("release_kind") == FEATURE_WEIGHTS:
        facts.append(("Row order", "by rank: one row per feature, no records"))
    elif parts and not manifest.get("shuffled"):
        facts.append(
            (
                "Row order",
                "as the method wrote the parts: a release in parts is not shuffled, so within "
                "each part the records may follow the input's order",
            )
        )
    else:
        facts.append(
            (
                "Row order",
                f"shuffled (seed {manifest.get('shuffle_seed')}), so it says nothing about the input's"
                if manifest.get("shuffled")
                else "kept as in the input (shuffling was turned off)",
            )
        )
    source = (
        "the bundled demo data"
        if (inp.get("read") or {}).get("demo")
        else Path(inp["path"]).name
        if inp.get("path")
        else "not recorded"
    )
    read = inp.get("read") or {}
    dropped = (
        ", after dropping every record with a missing value"
        if read.get("drop_missing")
        else f", each missing value {FILLED.get(read.get('fill_missing'), 'filled')}"
        if read.get("fill_missing")
        else ""
    )
    facts.append(("Input", f"{source} ({_count(inp.get('rows'), 'record')}{dropped})"))
    project = manifest.get("project")
    if project:
        facts.append(("Project file", project.get("path")))
    facts += _method_facts(registry, method.get("name"), manifest.get("details") or {}, out.get("rows"))
    then = method.get("then") or {}
    if then.get("name"):
        facts += _method_facts(registry, then["name"], manifest.get("details") or {}, out.get("rows"))
    return Section("What was released").add("facts", facts)


def _then_fact(registry, method: dict, *, titled: bool) -> list:
    """The second step that perturbed the method's release, when the run had one."""
    then = method.get("then") or {}
    if not then.get("name"):
        return []
    name = _title(registry, "algorithm", then["name"]) if titled else then["name"]
    return [
        (
            "Then",
            f"{name}{_params_text(_applicable(registry, then))}, perturbing the method's release; the privacy "
            "model judged the perturbed release",
        )
    ]


def _method_facts(registry, method: str | None, details: dict, rows) -> list:
    """The facts the release's method declares of its details (``Algorithm.report_facts``)."""
    try:
        cls = registry.get("algorithm", method)
    except BadInput:  # a method no longer installed: its details are still listed with the parameters
        return []
    return [
        (f.label, f.text if f.key is None else Num(f.text, f"details.{f.key}", f.value))
        for f in cls.report_facts(details, rows)
    ]


def _model_fact(registry, manifest: dict):
    pm, v = manifest.get("privacy_model") or {}, manifest.get("verdict") or {}
    if not pm.get("name") and manifest.get("release_kind") == FEATURE_WEIGHTS:
        return "none applies: the file holds feature weights, not records" + (
            " (their differential privacy is under “Privacy budget”)" if manifest.get("privacy_budget") else ""
        )
    if not pm.get("name"):
        return "none: the release makes no privacy claim"
    each = _each_verdict(manifest)
    if len(each) > 1:
        return "all of: " + "; ".join(
            f"{_title(registry, 'privacy-model', e['model'], e.get('params'))}"
            f"{_params_text(e.get('params'))}"
            f" ({'holds' if e.get('holds') else 'fails'})"
            for e in each
        )
    verified = f"; verified on {_written(manifest)}: {_finding(v.get('message'))}" if v.get("message") else ""
    return (
        f"{_title(registry, 'privacy-model', pm['name'], pm.get('params'))}{_params_text(pm.get('params'))}{verified}"
    )


def _risk_section(manifest: dict, doc: Document) -> Section:
    risk = manifest.get("risk") or {}
    sec = Section("Re-identification risk, before and after")
    before, after = risk.get("before"), risk.get("after")
    if not before and not after:
        return sec.add("p", "No risk figures were recorded for this release.")
    t = risk.get("threshold", DEFAULT_RISK_THRESHOLD)
    cols = (after or before).get("columns") or []
    sec.add(
        "p",
        "Someone who knows that a person is in this file, and knows their "
        f"{_names(cols, limit=6) or 'details'}, can look for the records that match. If n records match, "
        "their chance of picking the right one is 1 in n. That chance is the re-identification risk of "
        "the record (the prosecutor model, as the ARX anonymisation tool reports it).",
    )
    rows = [
        ("Highest risk (the most exposed record)", "max", _pct),
        ("Average risk over all records", "avg", _pct),
        (f"Records at risk (risk above {_pct(t)}, i.e. groups smaller than {_group_bound(t)})", "at_risk", _pct),
        ("Smallest group of look-alike records", "smallest_group", _int),
        ("Number of groups", "groups", _int),
    ]
    if "marketer" in (after or before or {}):  # manifests written before the engine computed them lack these
        people = (manifest.get("population") or {}).get("rows")
        against = (
            f"against the population of {people:,} records"
            if isinstance(people, int)
            else "the whole data set is the population"
        )
        rows += [
            (f"Journalist risk, highest ({against})", "journalist_max", _pct),
            ("Marketer risk (expected share of records re-identified)", "marketer", _pct),
        ]
    table = [
        [label, _num(before, "risk.before", key, fmt), _num(after, "risk.after", key, fmt)] for label, key, fmt in rows
    ]
    header = [
        "",
        f"Before: the input ({_count(len((before or {}).get('columns') or []), 'column')} considered)",
        "After: the release",
    ]
    sec.add("table", table, header=header)
    if not before:
        sec.add("p", risk.get("before_note") or "The input could not be assessed, so there are no “before” figures.")
    elif risk.get("before_scope"):
        sec.add("p", risk["before_scope"])
    elif after and (before.get("columns") or []) != after.get("columns"):
        sec.add(
            "p",
            f"“Before” looks at every candidate column of the input ({_names(before['columns'], limit=8)}); "
            "“after” at the columns the release keeps, as released.",
        )
    if (manifest.get("roles") or {}).get("exact_quasi_identifiers"):
        sec.add(
            "p",
            "This release publishes the quasi-identifiers exact beside its groups (bucketisation), so "
            "the groups do not lower this risk: they hide only which of its group's sensitive values is a "
            "record's. The privacy model above judges that.",
        )
    if risk.get("after_note"):
        sec.add("p", f"No “after” figures: {risk['after_note']}.")
    doc.charts["risk"] = risk
    sec.add(
        "chart",
        "risk",
        caption="Left: risk before and after (lower is safer; the dashed line is the threshold). "
        "Right: how many records share their values with how many others.",
    )
    return sec


def _sample_section(sample: dict) -> Section:
    """The risk figures of survey microdata (a weight or household column marked), before and after."""
    sec = Section("Risk on survey microdata, before and after")
    before, after = sample.get("before"), sample.get("after")
    weight, household = sample.get("weight"), sample.get("household")
    weighted = f"the survey weights in {weight!r}" if weight else "no survey weights (each record stands for itself)"
    sec.add(
        "p",
        "How statisticians measure the risk of a sample: each record's individual risk is the chance that "
        "an intruder who matches it on the quasi-identifiers picks the right person, from how many records "
        f"share its values and how many people they stand for ({weighted}; Benedetti and Franconi's "
        "estimate, as sdcMicro's indivRisk computes it). Global risk is its mean, the expected "
        f"re-identifications its sum. {str(sample.get('blanks') or '').capitalize()}, as sdcMicro counts it.",
    )
    rows = [
        ("Global risk (mean individual risk)", "global_risk", _pct),
        ("Expected re-identifications (sum of the individual risks)", "expected_reidentifications", _two),
        ("Highest individual risk", "highest_risk", _pct),
        ("Sample uniques (records whose values no other record shares)", "sample_uniques", _int),
    ]
    if household:
        rows += [
            (f"Household risk, mean over records (households in {household!r})", "household_global_risk", _pct),
            ("Expected re-identifications through households", "household_expected_reidentifications", _two),
        ]
    table = [
        [label, _num(before, "risk.sample.before", key, fmt), _num(after, "risk.sample.after", key, fmt)]
        for label, key, fmt in rows
    ]
    sec.add("table", table, header=["", "Before: the input", "After: the release"])
    if after and weight and not after.get("weighted"):
        sec.add(
            "p", f"The release does not carry {weight!r}, so its figures count every record as standing for itself."
        )
    if household and after and after.get("household_global_risk") is None:
        sec.add(
            "p",
            f"The release does not hold {household!r} (a household id is released only when the user agrees), "
            "so none of its records can be joined to its household: it has no household risk, and each record's "
            "risk is its individual risk.",
        )
    return sec


def _two(v) -> str:
    return f"{v:,.2f}"


def _utility_section(registry, manifest: dict, doc: Document) -> Section:
    sec = Section("Usefulness, before and after")
    util = manifest.get("utility")
    if util and (util.get("before") or util.get("after")):
        sec.add(
            "p",
            f"To see how much the release still supports analysis, Veil trained the same classifier "
            f"({util.get('classifier')}) to predict “{util.get('target')}”, once on the original data and "
            f"once on the release, and measured how well it predicts records it was not trained on. "
            f"1.0 is perfect; an AUC of 0.5 is guessing."
            + (
                " Studies tune C in every fold, which costs six times the fits; a release's report does "
                "so when asked (veil run --tuned-report)."
                if "C = " in str(util.get("classifier"))
                else ""
            ),
        )
        rows = utility_rows(util)
        b, a = util.get("before"), util.get("after")
        sec.add(
            "table",
            [
                [label, _num(b, "utility.before", key, _dec), _num(a, "utility.after", key, _dec), _delta(b, a, key)]
                for label, key in rows
            ],
            header=["", "Trained on the original", "Trained on the release", "Change"],
        )
        doc.charts["utility"] = util
        sec.add("chart", "utility", caption="The same classifier, trained on the original and on the release.")
    elif util and util.get("note"):
        sec.add("p", f"No classifier comparison: {util['note']}.")
    else:
        sec.add("p", "No classifier comparison was made for this export.")
    metrics = manifest.get("metrics") or {}
    samples = manifest.get("metric_samples") or {}
    applied = {k: v for k, v in metrics.items() if v is not None}
    if applied:
        rows = [
            [_title(registry, "metric", k), Num(_g(v), f"metrics.{k}", v), _sample_words(samples.get(k))]
            for k, v in applied.items()
        ]
        sec.add("p", "Measures computed on the release when the method ran:")
        sec.add("table", rows, header=["Measure", "Value", "Computed on"])
    idle = [_title(registry, "metric", k) for k, v in metrics.items() if v is None]
    if idle:  # one line, not a row of "does not apply" each
        sec.add("p", f"Not applicable to this release, so not shown: {', '.join(idle)}.")
    if samples:
        sec.add(
            "p",
            "A measure computed on a sample ran on a random sample (of the records, for those that "
            "train classifiers on a large input; of the large populations, for a utility loss with "
            "too many to evaluate one by one), drawn with the seed shown, so it can be repeated "
            "exactly.",
        )
    return sec


def _sample_words(sample: dict | None) -> str:
    if not sample:
        return "all records"
    unit = sample.get("unit", "records")
    of = f"more than {sample['of']:,}" if sample.get("more_than") else f"{sample['of']:,}"
    return f"a sample of {sample['rows']:,} of {of} {unit} (seed {sample['seed']})"


def _budget_section(manifest: dict) -> Section:
    budget = manifest["privacy_budget"]
    sec = Section("Privacy budget (differential privacy)")
    eps = budget.get("epsilon_spent")
    sec.add(
        "facts",
        [
            ("ε spent", Num(_g(eps), "privacy_budget.epsilon_spent", eps)),
            ("Noise source", str(budget.get("noise") or "not recorded")),
        ],
    )
    sec.add(
        "p",
        "Differential privacy bounds how much any one person's record can change what is released. "
        "A smaller ε is a stronger guarantee. The guarantee holds only under these assumptions:",
    )
    sec.add("list", budget.get("assumptions") or ["the method stated none"])
    rows_in, rows_out = (manifest.get("input") or {}).get("rows"), (manifest.get("output") or {}).get("rows")
    if isinstance(rows_in, int) and isinstance(rows_out, int) and rows_in != rows_out:
        sec.add(
            "p",
            f"The release holds {rows_out:,} records made from {rows_in:,}: the mechanism draws noisy counts, "
            "so the number of released records is not the input's.",
        )
    return sec


def _caveats(registry, manifest: dict) -> Section:
    pm = manifest.get("privacy_model") or {}
    items = []
    if pm.get("name"):
        try:
            model = registry.get("privacy-model", pm["name"])
            counted = manifest.get("population") and model.caveats_with_population is not None
            items += list(model.caveats_with_population if counted else model.caveats)
        except BadInput:
            pass
        roles = manifest.get("roles") or {}
        qis = roles.get("quasi_identifiers") or []
        exact = roles.get("exact_quasi_identifiers") or []
        if exact:
            items.append(
                f"The quasi-identifiers {_names(exact)} are published exact, as in the input: anyone who "
                "knows them can find a person's record (the re-identification risk above is the input's). "
                "The guarantee covers only the link from a record to its sensitive value "
                f"({_names(roles.get('sensitive') or []) or 'none'}), which the file gives per group."
            )
        else:
            items.append(
                f"The guarantee covers the quasi-identifiers: {_names(qis) or 'none'}. If someone could "
                "know other columns of a person, those columns are not protected by it."
            )
        if roles.get("blanks") in BLANK_WORDS:  # how blank and suppressed cells were counted
            items.append(
                f"Groups were counted by the {roles['blanks']} rule: {BLANK_WORDS[roles['blanks']]}. A blank "
                "sensitive value counts as no value."
            )
    elif manifest.get("release_kind") == FEATURE_WEIGHTS:
        items.append(
            "No record-level privacy model applies: the file holds feature weights, not records. What the "
            "weights reveal is limited only by the differential privacy stated below, if any."
        )
    else:
        items.append("No privacy model was applied: nothing limits what this file reveals about people.")
    items.append(
        "Risk figures assume the attacker knows the person is in the file (the prosecutor model); for "
        "someone who does not, the risk is lower."
    )
    budget = manifest.get("privacy_budget")
    if budget:
        items += [f"Assumption of the differential privacy guarantee: {a}" for a in budget.get("assumptions") or []]
    if (manifest.get("utility") or {}).get("before") or (manifest.get("utility") or {}).get("after"):
        items.append(
            "Usefulness is measured with one classifier on one target column; other analyses may lose more or less."
        )
    reached = manifest.get("released_sensitive") or []
    if reached:
        items.insert(
            0,
            f"This file contains the column{'s' if len(reached) > 1 else ''} marked sensitive: "
            f"{_names(reached)}. Anyone receiving it can read {'them' if len(reached) > 1 else 'it'}.",
        )
    items += [f"Note from the method: {n}" for n in manifest.get("notes") or []]
    return Section("Caveats").add("list", items)


def _parameters(registry, manifest: dict) -> Section:
    method, pm = manifest.get("method", {}), manifest.get("privacy_model", {})
    models = [f"{e['model']}{_params_text(e.get('params'))}" for e in _each_verdict(manifest)] if pm.get("name") else []
    facts = [
        ("Method", f"{method.get('name')}{_params_text(_applicable(registry, method))}"),
        *_then_fact(registry, method, titled=False),
        ("Privacy models" if len(models) > 1 else "Privacy model", "; ".join(models) or "none"),
        ("Seed", str(manifest.get("seed"))),
        ("Shuffle seed", str(manifest.get("shuffle_seed")) if manifest.get("shuffled") else "not shuffled"),
    ]
    risk = manifest.get("risk") or {}
    if risk:
        facts.append(("Risk threshold", Num(_g(risk.get("threshold")), "risk.threshold", risk.get("threshold"))))
    recipe = manifest.get("recipe")
    if recipe:
        facts.append(("Binarisation", f"{len(recipe.get('steps') or [])} steps (listed in manifest.json)"))
    for key, value in (manifest.get("details") or {}).items():
        if key in ("epsilon_spent", "assumptions", "generalisation"):  # shown under “What was released”
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        facts.append((f"Method detail: {key}", text if len(text) <= 200 else text[:199] + "… (see manifest.json)"))
    plat = manifest.get("platform") or {}
    facts.append(
        (
            "Made with",
            f"Veil {manifest.get('veil_version') or '?'} on {plat.get('system', '?')} "
            f"{plat.get('release', '')} {plat.get('machine', '')}, Python {plat.get('python', '?')}",
        )
    )
    facts.append(("Exported", _when(manifest.get("created", ""))))
    return Section("Parameters").add("facts", facts)


def _fingerprints(manifest: dict, checks: dict) -> Section:
    sec = Section("File fingerprints (SHA-256)")
    sec.add(
        "p",
        "A fingerprint changes if a single byte of the file changes. Anyone can check the released file "
        "against this report with “veil verify <folder>”.",
    )
    parts = _parts(manifest)
    rows = (
        [
            (f"Part {i + 1} ({_count(p.get('rows'), 'record')})", p.get("path"), p.get("sha256"))
            for i, p in enumerate(parts)
        ]
        if parts
        else [("Released file", manifest.get("output", {}).get("path"), manifest.get("output", {}).get("sha256"))]
    )
    rows.append(
        (
            "Input file",
            Path(manifest.get("input", {}).get("path") or "not recorded").name,
            manifest.get("input", {}).get("sha256"),
        )
    )
    if manifest.get("project"):
        rows.append(("Project file", Path(manifest["project"]["path"]).name, manifest["project"].get("sha256")))
    sec.add("code", [(label, name or "", digest or "not recorded") for label, name, digest in rows])
    signer = manifest.get("signed_by") or {}
    if signer.get("fingerprint"):
        sec.add(
            "p",
            f"The manifest is signed ({signer.get('algorithm') or '?'}) by the key with the fingerprint "
            f"{signer['fingerprint']}, kept on the workstation that made the release. “veil verify <folder> "
            f"--public-key release-signing-key.pub” checks that this key signed it and that nothing in "
            f"it was changed since.",
        )
    status = [text for key in ("release", "input") if (text := _check_text(key, checks.get(key)))]
    status += checks.get("differences") or []
    if status:
        sec.add("list", status)
    return sec


def _finding(message: str | None) -> str:
    """A model's message without its leading "holds:"/"fails:" (the headline already says which)."""
    text = (message or "").strip()
    for word in ("holds:", "fails:"):
        if text.lower().startswith(word):
            return text[len(word) :].strip()
    return text


def _check_text(key: str, state: str | None) -> str | None:
    if state is None:
        return None
    what = "The released file" if key == "release" else "The input file"
    return {
        "matches": f"{what} matches its fingerprint.",
        "changed": f"{what} has changed since the export: its fingerprint differs.",
        "missing": f"{what} is no longer where the manifest says.",
        "demo": "The input is Veil's bundled demo data.",
        "not recorded": f"{what}'s location was not recorded.",
        "is no longer a regular file": f"{what} is no longer a regular file: it was not read.",
        "not read": f"{what} was not read: the manifest is not signed by this workstation's key.",
    }.get(state, f"{what}: {state}.")


def _release_state(state: str) -> str:
    return "has changed since it was exported" if state == "changed" else "is missing"


# -- writing -----------------------------------------------------------------------------------------
def render_report_files(
    registry,
    manifest: dict,
    stage: Staging,
    options: ReportOptions,
    binding: dict,
    checks: dict | None = None,
    ctx: Context | None = None,
) -> dict:
    """Render ``report.html`` and ``report.pdf`` (as ``options`` asks) into a staging folder, each
    carrying ``binding`` (the hash of the manifest it describes); return their staged paths."""
    from .report_render import render_html, render_pdf

    ctx = ctx or Context(0)
    ctx.check()
    doc = build_document(registry, manifest, checks)
    doc.meta["binding"] = binding_text(binding)
    paths = {}
    if options.html:
        ctx.progress(0.0, "writing report.html")
        html = render_html(doc)
        ctx.check()
        paths["html"] = stage.file(REPORT_FILES["html"])
        paths["html"].write_text(html, encoding="utf-8")
    if options.pdf:
        ctx.progress(0.3, "writing report.pdf")
        paths["pdf"] = stage.file(REPORT_FILES["pdf"])
        render_pdf(doc, paths["pdf"], check=ctx.check)
    ctx.progress(1.0, "report written")
    return paths


def write_report(
    registry,
    manifest: dict,
    out_dir: str | Path,
    options: ReportOptions = ReportOptions(),
    checks: dict | None = None,
    *,
    binding: dict | None = None,
    ctx: Context | None = None,
) -> dict:
    """Write ``report.html`` and ``report.pdf`` (as ``options`` asks) into ``out_dir`` together (one
    transaction, see :mod:`veil.engine.staging`); return their paths.

    ``binding`` ties the report to its manifest (default: ``manifest`` itself, as written)."""
    out = Path(out_dir)
    refuse_overwriting([out / name for name in REPORT_FILES.values()], recorded_inputs(manifest))
    with Staging(out, ctx.holding if ctx is not None else None) as stage:
        staged = render_report_files(
            registry, manifest, stage, options, binding if binding is not None else make_binding(manifest), checks, ctx
        )
        (ctx or Context(0)).check()
        stage.commit()
    return {kind: out / p.name for kind, p in staged.items()}


@dataclass(frozen=True)
class Regenerated:
    paths: dict
    manifest: dict  # the manifest as the report shows it (recomputed figures where they could be)
    checks: dict

    @property
    def release_intact(self) -> bool:
        return self.checks.get("release") == "matches"


def regenerate_report(
    registry,
    folder: str | Path,
    *,
    risk_threshold: float | None = None,
    utility: bool = True,
    ctx: Context | None = None,
) -> Regenerated:
    """``veil report DIR``: recompute the figures from the released file and the input, compare them
    with the manifest, re-check the privacy model, and write the report. Never raises for a missing
    or changed input (the report says so and leaves out the “before” figures).

    ``risk_threshold`` defaults to the one the manifest records; ``utility=False`` skips the classifier.
    A release in parts is counted again from its parts (:func:`_regenerate_parts`).
    """
    import datetime as _dt

    manifest = read_manifest(folder)
    out = Path(manifest.pop("_dir"))
    signature = check_signature(manifest)
    if signature.state == "invalid":  # the claims it would show are not the ones the export made
        raise BadInput(f"{out / 'manifest.json'}: {signature.why}; veil report regenerates only an intact manifest")
    recorded_risk = manifest.get("risk") or {}
    if risk_threshold is None:
        risk_threshold = recorded_risk.get("threshold", DEFAULT_RISK_THRESHOLD)
    options = ReportOptions(risk_threshold=risk_threshold, utility=utility)
    ctx = ctx or Context(manifest.get("seed") or 0)
    checks = {"when": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
    if _parts(manifest):
        return _regenerate_parts(registry, manifest, out, risk_threshold, checks, ctx)
    after = _reload_release(registry, manifest, out, checks)
    original, before = _reload_input(registry, manifest, checks, trusted=made_here(manifest))
    records = manifest.get("release_kind") != FEATURE_WEIGHTS
    if not records:  # feature weights: the released file holds no records to assess
        after, options = None, ReportOptions(risk_threshold=risk_threshold, utility=False)
    fresh = assess(registry, original, before, after, options, ctx)
    view = dict(manifest)
    view["risk"] = _merge(fresh["risk"], recorded_risk, after is not None, before is not None)
    if checks.get("input_note"):
        view["risk"]["before_note"] = checks["input_note"]
    if not records:
        view["risk"]["after_note"] = recorded_risk.get("after_note")
    if options.utility:
        view["utility"] = _merge(fresh["utility"], manifest.get("utility") or {}, after is not None, before is not None)
    if math.isclose(options.risk_threshold, recorded_risk.get("threshold", -1)):
        checks["differences"] = _differences(manifest, view)
    regenerated = checks["when"]
    paths = write_report(registry, view, out, options, checks, binding=make_binding(manifest, regenerated), ctx=ctx)
    return Regenerated(paths, view, checks)


def _regenerate_parts(registry, manifest: dict, out: Path, threshold: float, checks: dict, ctx) -> Regenerated:
    """``veil report`` on a release in parts: every part's hash checked, its classes counted again here
    (a chunk at a time), the models judged on them and the "after" risk recomputed; "before" is the
    one recorded (the method counted the input's classes at export), at the recorded threshold only."""
    from .part_counts import count_parts, judge_counts, parts_assessment

    parts, files, state = _parts(manifest), [], "matches"
    for entry in parts:
        name = entry.get("path")
        if not isinstance(name, str) or not plain_name(name):
            raise BadInput("the manifest's output.parts_of names a part that is not a plain file name")
        path = out / name
        if not path.exists():
            state = "missing"
            break
        check_regular(path)
        if sha256_file(path) != entry.get("sha256"):
            state = "changed"
        files.append(path)
    checks["release"] = state
    recorded = manifest.get("risk") or {}
    view = dict(manifest)
    same = math.isclose(threshold, recorded.get("threshold", -1))
    if state == "matches":
        roles = manifest.get("roles") or {}
        qis, sensitive = list(roles.get("quasi_identifiers") or []), list(roles.get("sensitive") or [])
        fmt = manifest["output"].get("format") or registry.preferred("exporter")
        counts, _ = count_parts(registry, files, fmt, qis + sensitive)
        ctx.check()
        calls = [PluginCall.parse(m) for m in manifest.get("privacy_models") or []]
        if calls:
            verdict = judge_counts(bind_models(registry, calls), counts, qis, sensitive)
            checks["recheck"] = ("holds: " if verdict.holds else "FAILS: ") + _finding(verdict.message)
        view["risk"] = parts_assessment(counts, qis, None, threshold)["risk"]
        view["risk"].pop("before_note", None)
    else:
        view["risk"] = {**recorded, "threshold": threshold, "after": recorded.get("after") if same else None}
    view["risk"]["before"] = recorded.get("before") if same else None
    if view["risk"]["before"] and recorded.get("before_scope"):
        view["risk"]["before_scope"] = recorded["before_scope"]
    if not view["risk"]["before"]:
        view["risk"]["before_note"] = (
            (recorded.get("before_note") or "")
            if same or not recorded.get("before")
            else (
                f"the input's classes were counted when it was exported and not kept, so “before” is shown only at "
                f"the threshold recorded then ({_g(recorded.get('threshold'))})"
            )
        )
    if same:
        checks["differences"] = _differences(manifest, view)
    paths = write_report(
        registry,
        view,
        out,
        ReportOptions(risk_threshold=threshold, utility=False),
        checks,
        binding=make_binding(manifest, checks["when"]),
        ctx=ctx,
    )
    return Regenerated(paths, view, checks)


def _reload_release(registry, manifest: dict, out: Path, checks: dict):
    path = out / manifest["output"]["path"]
    table = manifest["output"].get("table")  # a release written as a table of a database
    if not path.exists():
        checks["release"] = "missing"
        return None
    if (
        table_problem(registry, manifest["output"])
        if table is not None
        else (sha256_file(path) != manifest["output"].get("sha256"))
    ):
        checks["release"] = "changed"
        return None
    checks["release"] = "matches"
    pm = manifest.get("privacy_model") or {}
    population = None
    try:
        population, problem = manifest_population(registry, manifest)
        if problem:
            checks["recheck"] = f"could not be re-checked: {problem}"
        elif pm.get("name"):  # the model on the file (the report files are about to be rewritten: not checked)
            models = [PluginCall.parse(m) for m in manifest.get("privacy_models") or []] or [
                PluginCall(pm["name"], pm.get("params") or {})
            ]
            verification = verify_file(
                registry,
                path,
                manifest["output"].get("format") or registry.preferred("exporter"),
                models,
                manifest.get("roles") or {},
                parts=list(manifest["output"].get("parts") or {}),
                population=population,
                table=table,
            )
            checks["recheck"] = ("holds: " if verification.holds else "FAILS: ") + _finding(verification.message)
    except VeilError as exc:
        checks["recheck"] = f"could not be re-checked: {exc}"
    fmt = manifest["output"].get("format") or registry.preferred("exporter")
    frame = read_released(registry, fmt, path, table)
    parts = read_parts(registry.exporter(fmt), path, list(manifest["output"].get("parts") or {})) if not table else {}
    release = with_parts(release_as_written(frame, manifest.get("roles") or {}, parts), parts)
    return dataclasses.replace(release, population=population) if population is not None else release


def _reload_input(registry, manifest: dict, checks: dict, trusted: bool = True):
    """The data the method ran on, read again as the manifest recorded; (None, None) with a note in
    ``checks`` when it is gone, changed or unreadable, or when the manifest is not one this
    workstation signed (``trusted``): a path named by a manifest from elsewhere is never read."""
    inp = manifest.get("input") or {}
    read = dict(inp.get("read") or {})
    path, digest = inp.get("path"), inp.get("sha256")
    if read.get("demo"):
        checks["input"] = "demo"
    elif not trusted and path:
        checks["input"] = "not read"
        checks["input_note"] = (
            "The manifest is not signed by this workstation's key, so the input file it names was not read "
            "and the “before” figures are left out (only an export made here says which file to read)."
        )
        return None, None
    elif not path:
        checks["input"] = "not recorded"
    elif not Path(path).exists():
        checks["input"] = "missing"
    elif not Path(path).is_file():  # a FIFO or a device where the input was: never opened
        checks["input"] = "is no longer a regular file"
    elif digest and sha256_file(path) != digest:
        checks["input"] = "changed"
    else:
        checks["input"] = "matches"
    if checks["input"] not in ("matches", "demo"):
        checks["input_note"] = (
            f"{_check_text('input', checks['input'])} The “before” figures are left out, "
            f"because they would describe other data."
        )
        return None, None
    try:
        data = DataSource.from_dict({**read, "path": None if read.get("demo") else path}).load(registry)
        if isinstance(data, Table) and inp.get("schema"):
            schema = Schema.from_dict(inp["schema"])
            data = _marked_subset(data, (manifest.get("population") or {}).get("subset_column"))
            if schema.names != data.schema.names:  # read with other options than at export: other data
                raise BadInput("its columns differ from those recorded in the manifest")
            data = Table(data.frame, schema, data.source, data.sha256)
        recipe = Recipe.from_dict(manifest["recipe"]) if manifest.get("recipe") else None
        prepared = prepare(data, registry.algorithm(manifest["method"]["name"]), recipe)
    except Exception as exc:  # whatever the input has become, the report is still written, and says why
        why = str(exc).split(";")[0]
        checks["input"] = f"could not be read again ({why})"
        checks["input_note"] = f"The input could not be read again ({why}), so there are no “before” figures."
        return None, None
    return prepared, before_release(prepared)


def _marked_subset(data: Table, subset_column: str | None) -> Table:
    """The records a ``--subset-column`` marks in the population file read again, the column dropped:
    the data the export ran on (the whole file, as read, has the column and every record)."""
    if not subset_column or subset_column not in data.frame.columns:
        return data
    from ..data.population import subset_mask

    chosen = subset_mask(data.frame[subset_column], subset_column)
    keep = tuple(c for c in data.schema.columns if c.name != subset_column)
    frame = data.frame.loc[chosen, [c.name for c in keep]].reset_index(drop=True)
    return Table(frame, Schema(keep), data.source, data.sha256)


def _merge(fresh: dict | None, recorded: dict, have_after: bool, have_before: bool) -> dict | None:
    """Fresh figures where they could be recomputed; the recorded “after” ones where the file is not intact."""
    if fresh is None:
        return None
    merged = dict(fresh)
    if not have_after and recorded.get("after"):
        merged["after"] = recorded["after"]
    if not have_before:
        merged["before"] = None
    return merged


def _differences(recorded: dict, shown: dict) -> list[str]:
    found = []
    for section in ("risk", "utility"):
        for side in ("before", "after"):
            old = ((recorded.get(section) or {}).get(side)) or {}
            new = ((shown.get(section) or {}).get(side)) or {}
            for key, value in new.items():
                if (
                    isinstance(value, (int, float))
                    and isinstance(old.get(key), (int, float))
                    and not math.isclose(value, old[key], rel_tol=1e-9, abs_tol=1e-12)
                ):
                    found.append(f"{section} {side} {key}: recomputed {_g(value)}, the manifest says {_g(old[key])}.")
    return found


# -- formatting helpers ------------------------------------------------------------------------------
def _num(side: dict | None, prefix: str, key: str, fmt) -> Num:
    if not side or side.get(key) is None:
        return Num("—", f"{prefix}.{key}", None)
    return Num(fmt(side[key]), f"{prefix}.{key}", side[key])


def _delta(before: dict | None, after: dict | None, key: str) -> str:
    if not before or not after or before.get(key) is None or after.get(key) is None:
        return "—"
    d = after[key] - before[key]
    return f"{d:+.3f}"


def _pct(v) -> str:
    return f"{100 * v:.1f} %" if v >= 0.001 or v == 0 else f"{100 * v:.3f} %"


def _dec(v) -> str:
    return f"{v:.3f}"


def _int(v) -> str:
    return f"{int(v):,}"


def _g(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _group_bound(threshold: float) -> str:
    """The group size below which a record's risk 1/size exceeds ``threshold``."""
    if threshold <= 0:
        return "any size"
    bound = 1 / threshold
    return str(round(bound)) if abs(bound - round(bound)) < 1e-9 else str(math.ceil(bound))


def _count(n, word: str) -> str:
    if n is None:
        return f"? {word}s"
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _labelled_names(output: dict) -> str:
    """The released columns, each with the variable label its input file gave it ("age (Age at
    interview, years)")."""
    labels = output.get("variable_labels") or {}
    return _names(f"{c} ({labels[c]})" if labels.get(c) else c for c in output.get("columns") or [])


def _names(names, limit: int = 12) -> str:
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _applicable(registry, method: dict) -> dict:
    """The method's parameters that apply to the run (the manifest keeps them all)."""
    params = method.get("params") or {}
    try:
        return registry.get("algorithm", method.get("name")).applicable_params(params)
    except BadInput:  # a method no longer installed: every parameter as recorded
        return dict(params)


def _params_text(params) -> str:
    """``(k = 5, …)``: the parameters set; one left unset (None: k-map's sampling fraction with a
    population table) is not a setting the reader needs."""
    given = {k: v for k, v in (params or {}).items() if v is not None}
    if not given:
        return ""
    return " (" + ", ".join(f"{k} = {_value_text(v)}" for k, v in given.items()) + ")"


def _value_text(value) -> str:
    """A parameter's value as a reader writes it: l = 2, not l = 2.0."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _title(registry, kind: str, name, params: dict | None = None) -> str:
    """A plugin's title and name; a privacy model's title as its parameters make it (``display_title``)."""
    try:
        cls = registry.get(kind, name)
    except BadInput:
        return str(name)
    title = cls.display_title(params or {}) if kind == "privacy-model" else cls.title
    return f"{title} ({name})" if title and title != name else str(name)


def _fmt_name(registry, fmt) -> str:
    """The format's title as its exporter declares it (its name when it is not installed)."""
    try:
        return registry.get("exporter", fmt).title or str(fmt)
    except BadInput:
        return str(fmt)


def _when(iso: str) -> str:
    return iso.replace("T", " ").replace("+00:00", " UTC") if iso else "?"
