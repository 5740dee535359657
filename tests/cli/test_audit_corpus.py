"""The audit as a test: over 150 bad or hostile inputs through the real command line.

Each case writes its files into a fresh folder, runs ``veil`` (in-process; a few as real processes)
and checks the exit code, exactly one line on stderr (or, for a release that fails verification,
one FAILED line), no traceback, and that every entry of the folder (inputs, files outside the
output folder, the output folder itself: each file by its SHA-256, each link by its target, each
FIFO or folder by its kind) is as it was: nothing written, removed or replaced.

A case that would block or never end when Veil gets it wrong (a FIFO, ``/dev/zero``) runs as a
real process, whose time limit turns a hang into a failure.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from veil.cli import program as cli
from veil.engine import make_registry
from veil.cli import main

from .helpers import SMALL_CSV, Outcome, sha256

PEOPLE = SMALL_CSV.encode()
RUN = ("run", "--method", "all-features", "--metrics", "sfc", "--no-report", "--out", "{d}/out")
FILE_RUN = (*RUN, "--data", "{d}/in.csv")
ROLES = ("--identifier", "name", "--quasi", "age_band,sex", "--target", "outcome")


@dataclass(frozen=True)
class Case:
    files: dict  # name -> bytes, str (UTF-8), or a JSON-ready object (written as JSON)
    argv: tuple  # "{d}" stands for the case's folder
    code: int = 2
    hint: str = ""  # a word the message must contain (the field, the column, the range…)
    links: dict = field(default_factory=dict)  # name -> what the symbolic link points to
    from_release: Callable | None = None  # the files of a real export -> this case's files (added to ``files``)
    plant: Callable | None = None  # makes what files cannot say (a staging folder, a FIFO) in the case's folder
    process: bool = False  # run as a real process: a regression would hang, and its time limit catches that
    env: dict = field(default_factory=dict)  # environment variables set for the case ("{d}" as in argv)


CASES: dict[str, Case] = {}


def case(name: str, *args, **kwargs) -> None:
    assert name not in CASES, name
    CASES[name] = Case(*args, **kwargs)


# -- data files given to `veil run` and `veil inspect` -----------------------------------------------------------------
BAD_DATA = {
    "empty": b"",
    "blank lines": b"\n\n \n\t\n",
    "one NUL": b"\x00",
    "random binary": bytes((i * 37 + 11) % 256 for i in range(4096)),
    "png named csv": b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8,
    "zip named csv": b"PK\x03\x04" + bytes(200),
    "gzip named csv": b"\x1f\x8b\x08\x00" + bytes(100),
    "pdf named csv": b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n" + bytes(range(128, 256)),
    "invalid utf-8 bytes": b"a,b\n1,caf\x81\x8d\n2,ok\n",
    "utf-16 mark then garbage": b"\xff\xfe\x00\x81garbage",
    "utf-8 mark then invalid": b"\xef\xbb\xbfa,b\n1,\xff\xfe\n",
    "NUL bytes in cells": b"a,b\n1,\x00\x00\n2,3\n",
    "ragged short row": b"a,b,c\n1,2,3\n4,5\n6,7,8\n",
    "ragged long row": b"a,b,c\n1,2,3\n4,5,6,7\n",
    "ragged many": b"a,b\n1\n1,2,3\n1,2,3,4\n",
    "duplicate names": b"a,b,a\n1,2,3\n4,5,6\n",
    "duplicate names differing in case only kept": b"a,b,b\n1,2,3\n",
    "empty column name": b"a,,c\n1,2,3\n4,5,6\n",
    "blank column name": b"a,  ,c\n1,2,3\n",
    "header only": b"age,sex,zip\n",
    "header only no newline": b"age,sex,zip",
    "unterminated quote": b'a,b\n1,"never closed\n2,3\n',
    "quote in the middle": b'a,b\n1,2"3"4,5\n',
    "5,000 columns, one row short": (
        ",".join(f"c{i}" for i in range(5000)) + "\n" + ",".join("1" * 5000) + "\n" + ",".join("2" * 4999) + "\n"
    ).encode(),
    "5,000 duplicate columns": (",".join(["c"] * 5000) + "\n" + ",".join("1" * 5000) + "\n").encode(),
    "huge cell in a ragged file": b"a,b\n1," + b"x" * 2_000_000 + b",extra\n2,3\n",
    "only quotes": b'""\n""\n',
}
for name, content in BAD_DATA.items():
    case(f"run: {name}", {"in.csv": content}, FILE_RUN)
for name in (
    "empty",
    "random binary",
    "ragged short row",
    "duplicate names",
    "header only",
    "invalid utf-8 bytes",
    "5,000 duplicate columns",
    "unterminated quote",
):
    case(f"inspect: {name}", {"in.csv": BAD_DATA[name]}, ("inspect", "{d}/in.csv"))
for ext in ("xlsx", "parquet", "json", "tsv", "arff", "libsvm", "mat", "dat"):
    case(
        f"garbage named .{ext}",
        {f"in.{ext}": bytes((i * 91 + 7) % 256 for i in range(3000))},
        ("inspect", f"{{d}}/in.{ext}"),
    )
case("truncated xlsx", {"in.xlsx": b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(60)}, ("inspect", "{d}/in.xlsx"))
case("parquet magic without body", {"in.parquet": b"PAR1garbagePAR1"}, ("inspect", "{d}/in.parquet"))
case("unknown extension", {"in.xyz": b"\x00\x01\x02" * 10}, ("inspect", "{d}/in.xyz"))
case(
    "latin-1 file read as utf-8",
    {"in.csv": "name,town\nZoë,Besançon\n".encode("latin-1")},
    ("inspect", "{d}/in.csv", "--encoding", "utf-8"),
    hint="utf-8",
)
case("utf-16 without a mark", {"in.csv": "a,b\n1,2\n".encode("utf-16-le")}, FILE_RUN)
case("unknown encoding", {"in.csv": PEOPLE}, ("inspect", "{d}/in.csv", "--encoding", "klingon-8"))
case("two-character delimiter", {"in.csv": PEOPLE}, ("inspect", "{d}/in.csv", "--delimiter", ";;"))
case("unknown input format", {"in.csv": PEOPLE}, ("inspect", "{d}/in.csv", "--input-format", "dbase"))
case("negative skip-rows", {"in.csv": PEOPLE}, ("inspect", "{d}/in.csv", "--skip-rows", "-1"))
case("skip-rows past the end", {"in.csv": PEOPLE}, ("inspect", "{d}/in.csv", "--skip-rows", "500"))
case("too few --names", {"in.csv": b"1,2,3\n4,5,6\n"}, ("inspect", "{d}/in.csv", "--names", "a,b"))
case("duplicate --names", {"in.csv": b"1,2,3\n4,5,6\n"}, ("inspect", "{d}/in.csv", "--names", "a,b,a"))

# -- paths: missing, folders, links, too long --------------------------------------------------------------------------
case("missing file", {}, ("inspect", "{d}/nowhere.csv"), hint="nowhere.csv")
case("missing folder in the path", {}, ("inspect", "{d}/no/such/folder/in.csv"))
case("a folder as data", {"folder.csv/keep.txt": b"x"}, ("inspect", "{d}/folder.csv"))
case("dangling link", {}, ("inspect", "{d}/link.csv"), links={"link.csv": "nowhere.csv"})
case("link loop", {}, ("inspect", "{d}/a.csv"), links={"a.csv": "b.csv", "b.csv": "a.csv"})
case("link to a folder", {"sub/keep.txt": b"x"}, ("inspect", "{d}/link.csv"), links={"link.csv": "sub"})
case("a name too long", {}, ("inspect", "{d}/" + "n" * 300 + ".csv"))
case("a data path that is empty text", {}, ("inspect", ""))
case(
    "--out is a file",
    {"in.csv": PEOPLE, "taken": b"keep me"},
    (
        "run",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--no-report",
        "--data",
        "{d}/in.csv",
        "--out",
        "{d}/taken",
    ),
)
case(
    "--out below a file",
    {"in.csv": PEOPLE, "taken": b"keep me"},
    (
        "run",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--no-report",
        "--data",
        "{d}/in.csv",
        "--out",
        "{d}/taken/out",
    ),
)

# -- arguments: roles, ε, seeds, parameters ----------------------------------------------------------------------------
ROLE_CONFLICTS = {
    "quasi and target": ("--quasi", "sex", "--target", "sex"),
    "identifier and quasi": ("--identifier", "name", "--quasi", "name"),
    "identifier and sensitive": ("--identifier", "name", "--sensitive", "name"),
    "identifier and target": ("--identifier", "outcome", "--target", "outcome"),
    "sensitive and target": ("--sensitive", "outcome", "--target", "outcome"),
    "sensitive and quasi": ("--sensitive", "smoker", "--quasi", "smoker"),
    "quasi listed twice then target": ("--quasi", "sex,sex", "--target", "sex"),
    "quasi and target on a one-class fold": ("--quasi", "sex,smoker", "--target", "smoker", "--identifier", "smoker"),
}
for name, flags in ROLE_CONFLICTS.items():
    column = flags[-1].split(",")[0]
    case(f"role conflict: {name}", {"in.csv": PEOPLE}, (*FILE_RUN, *flags), hint=repr(column))
case(
    "verify role conflict: target and quasi",
    {"r.csv": PEOPLE},
    ("verify", "{d}/r.csv", "--model", "k-anonymity:k=2", "--target", "sex", "--quasi", "sex,age_band"),
    hint="'sex'",
)
case(
    "verify role conflict: sensitive and quasi",
    {"r.csv": PEOPLE},
    ("verify", "{d}/r.csv", "--model", "k-anonymity:k=2", "--sensitive", "smoker", "--quasi", "smoker"),
    hint="'smoker'",
)

DP = ("run", "--demo", "--metrics", "sfc", "--no-report", "--out", "{d}/out", "--method")
for eps in ("inf", "-inf", "nan", "1e-300", "1e300", "0", "-1", "abc", "", "0x10"):
    for method in ("laplace-dp-fs", "exponential-dp-fs"):
        if method == "exponential-dp-fs" and eps in ("-inf", "0", "abc", "", "0x10"):
            continue
        case(f"epsilon {eps or 'empty'} for {method}", {}, (*DP, f"{method}:epsilon={eps},m=3"), hint="epsilon")
case("m of 0", {}, (*DP, "laplace-dp-fs:m=0"), hint="'m'")
case("m of 21", {}, (*DP, "laplace-dp-fs:m=21"), hint="'m'")
for seed in (str(2**32), str(2**64), "-1", "1.5", "abc", "1e3"):
    case(f"seed {seed}", {"in.csv": PEOPLE}, (*FILE_RUN, "--seed", seed), hint="seed")
PARAMETERS = {
    "k 0": ("--model", "k-anonymity:k=0"),
    "k 13 of 12 rows": ("--model", "k-anonymity:k=13"),
    "k text": ("--model", "k-anonymity:k=abc"),
    "k fraction": ("--model", "k-anonymity:k=2.5"),
    "k huge": ("--model", "k-anonymity:k=" + "9" * 400),
    "model without name": ("--model", ":k=2"),
    "model parameter without value": ("--model", "k-anonymity:k"),
    "unknown model": ("--model", "no-such-model"),
    "unknown model parameter": ("--model", "k-anonymity:l=2"),
    "unknown method": ("--method", "no-such-method"),
    "unknown method parameter": ("--method", "all-features:foo=1"),
    "unknown metric": ("--metrics", "sfc,beauty"),
    "unknown format": ("--format", "docx"),
    "unknown flag": ("--frobnicate",),
    "risk threshold 2": ("--risk-threshold", "2"),
    "risk threshold nan": ("--risk-threshold", "nan"),
    "unknown target": ("--target", "nope"),
    "unknown identifier": ("--identifier", "nope"),
    "unknown quasi": ("--quasi", "nope"),
    "unknown sensitive": ("--sensitive", "nope"),
}
for name, flags in PARAMETERS.items():
    case(f"argument: {name}", {"in.csv": PEOPLE}, (*FILE_RUN, *flags))
case("no command", {}, ())
case("unknown command", {}, ("frobnicate",))
case("run without input", {}, RUN)
case("run without method", {"in.csv": PEOPLE}, ("run", "--data", "{d}/in.csv", "--out", "{d}/out"))
case(
    "project and --data together",
    {"p.json": {"veil_project": 1, "runs": []}, "in.csv": PEOPLE},
    ("run", "{d}/p.json", "--data", "{d}/in.csv", "--out", "{d}/out"),
)
case(
    "project with --method",
    {"p.json": {"veil_project": 1, "runs": []}},
    ("run", "{d}/p.json", "--method", "all-features", "--out", "{d}/out"),
)

# -- project files -----------------------------------------------------------------------------------------------------
DEEP_LIST = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
BAD_JSON_TEXT = {
    "empty": "",
    "not json": "veil_project = 1",
    "truncated": '{"veil_project": 1, "runs": [',
    "nested 100,000 deep in lists": DEEP_LIST,
    "nested 100,000 deep in objects": DEEP_OBJECT,
    "a list": "[1, 2]",
    "a string": '"project"',
    "a number": "1",
    "null": "null",
    "an integer of 5,000 digits": '{"veil_project": ' + "9" * 5000 + "}",
    "invalid utf-8": b'{"veil_project": 1, "x": "\xff\xfe"}',
    "NaN literal": '{"veil_project": 1, "runs": [{"method": "all-features", "seed": NaN}]}',
}
OK_DATA = {"path": "in.csv", "identifiers": ["name"], "quasi_identifiers": ["age_band", "sex"], "target": "outcome"}
OK_RUN = {"method": "all-features", "metrics": ["sfc"]}


def project(**fields) -> dict:
    return {"veil_project": 1, "data": OK_DATA, "runs": [OK_RUN], **fields}


BAD_PROJECTS = {
    "no veil_project": {"data": OK_DATA, "runs": [OK_RUN]},
    "veil_project text": project(veil_project="1"),
    "veil_project from the future": project(veil_project=99),
    "runs not a list": project(runs={"method": "all-features"}),
    "runs empty": project(runs=[]),
    "a run that is a number": project(runs=[5]),
    "a run without method": project(runs=[{"seed": 1}]),
    "method a number": project(runs=[{"method": 5}]),
    "method a list": project(runs=[{"method": ["all-features"]}]),
    "method object without name": project(runs=[{"method": {"params": {}}}]),
    "method params a list": project(runs=[{"method": {"name": "all-features", "params": [1]}}]),
    "model a list": project(runs=[{**OK_RUN, "model": ["k-anonymity"]}]),
    "model params text": project(runs=[{**OK_RUN, "model": {"name": "k-anonymity", "params": "k=2"}}]),
    "seed text": project(runs=[{**OK_RUN, "seed": "1"}]),
    "seed negative": project(runs=[{**OK_RUN, "seed": -1}]),
    "seed 2**32": project(runs=[{**OK_RUN, "seed": 2**32}]),
    "seed fraction": project(runs=[{**OK_RUN, "seed": 1.5}]),
    "seed true": project(runs=[{**OK_RUN, "seed": True}]),
    "metrics text": project(runs=[{**OK_RUN, "metrics": "sfc"}]),
    "recipe a list": project(recipe=["one-hot"]),
    "recipe steps not objects": project(recipe={"steps": ["one-hot", 3]}),
    "recipe steps an object": project(recipe={"steps": {"column": "sex"}}),
    "recipe step without column": project(recipe={"steps": [{"rule": "one-hot"}]}),
    "recipe step unknown rule": project(recipe={"steps": [{"column": "sex", "rule": "magic"}]}),
    "recipe cuts text": project(recipe={"steps": [{"column": "sex", "rule": "cuts", "cuts": "1,2"}]}),
    "recipe cuts not numbers": project(recipe={"steps": [{"column": "sex", "rule": "cuts", "cuts": ["a"]}]}),
    "recipe bins text": project(recipe={"steps": [{"column": "sex", "rule": "equal-width", "bins": "4"}]}),
    "recipe target a number": project(recipe={"target": 3, "steps": []}),
    "schema a list of strings": project(schema=["name", "age_band"]),
    "schema an object": project(schema={"name": "text"}),
    "schema entry without kind": project(schema=[{"name": "name"}]),
    "schema entry with unknown kind": project(schema=[{"name": "name", "kind": "colour"}]),
    "schema name a number": project(schema=[{"name": 1, "kind": "numeric"}]),
    "schema that does not match": project(schema=[{"name": "x", "kind": "numeric", "role": "insensitive"}]),
    "data a list": project(data=["in.csv"]),
    "data path a number": project(data={"path": 5}),
    "data names a number": project(data={**OK_DATA, "names": 5}),
    "data names numbers": project(data={**OK_DATA, "names": [1, 2]}),
    "data roles a list": project(data={**OK_DATA, "roles": ["sex"]}),
    "data unknown role": project(data={**OK_DATA, "roles": {"sex": "boss"}}),
    "data role conflict": project(data={**OK_DATA, "roles": {"sex": "target"}}),
    "data target a list": project(data={**OK_DATA, "target": ["outcome"]}),
    "data identifiers a number": project(data={**OK_DATA, "identifiers": 3}),
    "data unknown kind": project(data={**OK_DATA, "kinds": {"sex": "colour"}}),
    "data skip_rows negative": project(data={**OK_DATA, "skip_rows": -2}),
    "data skip_rows text": project(data={**OK_DATA, "skip_rows": "2"}),
    "data delimiter a number": project(data={**OK_DATA, "delimiter": 9}),
    "data header text": project(data={**OK_DATA, "header": "yes"}),
    "data missing file": project(data={**OK_DATA, "path": "gone.csv"}),
    "data sha256 a number": project(data={**OK_DATA, "sha256": 5}),
    "data changed since saved": project(data={**OK_DATA, "sha256": "0" * 64}),
    "results an object": project(results={"a": 1}),
}
for name, text in BAD_JSON_TEXT.items():
    content = text if isinstance(text, bytes) else text.encode()
    case(f"project: {name}", {"p.json": content}, ("run", "{d}/p.json", "--out", "{d}/out"))
for name, obj in BAD_PROJECTS.items():
    case(f"project: {name}", {"p.json": obj, "in.csv": PEOPLE}, ("run", "{d}/p.json", "--out", "{d}/out"))

# -- study files -------------------------------------------------------------------------------------------------------
STUDY_DATA = {"path": "in.csv", "identifiers": ["name"], "quasi_identifiers": ["age_band", "sex"], "target": "outcome"}


def study(**fields) -> dict:
    return {
        "data": STUDY_DATA,
        "model": "k-anonymity",
        "methods": ["all-features"],
        "sweep": {"k": [1, 2]},
        "metrics": ["sfc"],
        **fields,
    }


BAD_STUDIES = {
    "no methods": {"data": STUDY_DATA},
    "methods empty": study(methods=[]),
    "methods text": study(methods="all-features"),
    "method a number": study(methods=[5]),
    "unknown method": study(methods=["no-such-method"]),
    "sweep a list": study(sweep=["k"]),
    "sweep values not a list": study(sweep={"k": 2}),
    "sweep values empty": study(sweep={"k": []}),
    "sweep of an unknown parameter": study(sweep={"q": [1]}),
    "sweep value out of range": study(sweep={"k": [0]}),
    "repeats 0": study(repeats=0),
    "repeats text": study(repeats="3"),
    "repeats 10**9": study(repeats=10**9),
    "grid of 10**6": study(sweep={"k": list(range(1, 1001))}, repeats=1000),
    "max_runs 0": study(max_runs=0),
    "max_runs text": study(max_runs="many"),
    "grid above its own max_runs": study(max_runs=1),
    "seed 2**32": study(seed=2**32),
    "seed near the top with repeats": study(seed=2**32 - 2, repeats=5),
    "metrics text": study(metrics="sfc"),
    "unknown metric": study(metrics=["beauty"]),
    "charts text": study(charts="metric-bars"),
    "chart of an uncomputed metric": study(charts=[{"name": "metric-bars", "params": {"metric": "auc", "x": "k"}}]),
    "unknown chart": study(charts=["pie"]),
    "method repeats 0": study(methods=[{"name": "all-features", "repeats": 0}]),
    "method label a number": study(methods=[{"name": "all-features", "label": 3}]),
    "method fixed text": study(methods=[{"name": "all-features", "fixed": "yes"}]),
    "data a string": study(data="in.csv"),
    "data names a number": study(data={**STUDY_DATA, "names": 5}),
    "data role conflict": study(data={**STUDY_DATA, "sensitive": ["sex"]}),
    "recipe steps not objects": study(recipe={"steps": [1]}),
    "model a number": study(model=5),
}
for name, text in BAD_JSON_TEXT.items():
    content = text if isinstance(text, bytes) else text.encode()
    case(f"study: {name}", {"s.json": content}, ("study", "{d}/s.json", "--out", "{d}/out"))
for name, obj in BAD_STUDIES.items():
    case(f"study: {name}", {"s.json": obj, "in.csv": PEOPLE}, ("study", "{d}/s.json", "--out", "{d}/out"))
case(
    "study: --max-runs 0",
    {"s.json": study(), "in.csv": PEOPLE},
    ("study", "{d}/s.json", "--out", "{d}/out", "--max-runs", "0"),
)
case(
    "study: grid above --max-runs",
    {"s.json": study(), "in.csv": PEOPLE},
    ("study", "{d}/s.json", "--out", "{d}/out", "--max-runs", "1"),
    hint="2 runs",
)


# -- manifests: hostile, malformed, and releases tampered with ---------------------------------------------------------
DELETE = object()


def edited(signed: bool = False, **changes) -> Callable:
    """A maker of a real export's files with its manifest's fields changed (``a__b`` is field b of a).
    Unless ``signed``, the signature goes too (as in a manifest of a Veil that did not sign), so each
    field's own check is what answers; with it, the signature no longer matches."""

    def make(release: dict) -> dict:
        m = json.loads(release["manifest.json"])
        if not signed:
            m.pop("signature", None)
            m.pop("signed_by", None)
        for dotted, value in changes.items():
            *parents, last = dotted.split("__")
            node = m
            for p in parents:
                node = node.setdefault(p, {})
            if value is DELETE:
                node.pop(last, None)
            else:
                node[last] = value
        return {**release, "manifest.json": json.dumps(m).encode()}

    return make


def replaced(name: str, content: bytes) -> Callable:
    return lambda release: {**release, name: content}


BAD_MANIFESTS = {  # refused by both `veil verify` and `veil report`
    "output a list": edited(output=["release.csv"]),
    "output path a number": edited(output__path=5),
    "output sha256 missing": edited(output__sha256=DELETE),
    "output format a number": edited(output__format=3),
    "no output": edited(output=DELETE),
    "privacy_model text": edited(privacy_model="k-anonymity"),
    "privacy_model params a list": edited(privacy_model__params=[2]),
    "roles a list": edited(roles=["sex"]),
    "roles quasi text": edited(roles__quasi_identifiers="sex"),
    "roles quasi of a missing column": edited(roles__quasi_identifiers=["nope"]),
    "output format unknown": edited(output__format="docx"),
}
for name, make in BAD_MANIFESTS.items():
    for command in ("verify", "report"):
        case(
            f"manifest {command}: {name}",
            {},
            (command, "{d}", *(("--no-utility",) if command == "report" else ())),
            from_release=make,
        )
case(
    "manifest verify: released file missing",
    {},
    ("verify", "{d}"),
    code=1,
    from_release=edited(output__path="gone.csv"),
)
VERIFY_ONLY = {  # `veil report` writes a report that says what it could not check (tested elsewhere)
    "privacy_model unknown": edited(privacy_model__name="no-such-model"),
    "privacy_model k text": edited(privacy_model__params={"k": "many"}),
}
for name, make in VERIFY_ONLY.items():
    case(f"manifest verify: {name}", {}, ("verify", "{d}"), from_release=make)
REPORT_ONLY = {
    "risk a list": edited(risk=[0.2]),
    "risk threshold text": edited(risk__threshold="0.2"),
    "risk before a list": edited(risk__before=[1, 2]),
    "risk records text": edited(risk__after__records="many"),
    "risk group sizes a list": edited(risk__after__group_sizes=[1]),
    "utility text": edited(utility="good"),
    "verdict a list": edited(verdict=[True]),
    "seed text": edited(seed="0"),
    "input a list": edited(input=["in.csv"]),
    "notes an object": edited(notes={"a": 1}),
    "platform text": edited(platform="linux"),
    "privacy_budget text": edited(privacy_budget="eps=1"),
}
for name, make in REPORT_ONLY.items():
    case(f"manifest report: {name}", {}, ("report", "{d}", "--no-utility"), from_release=make)
for name, text in BAD_JSON_TEXT.items():
    case(
        f"manifest verify: {name}",
        {},
        ("verify", "{d}"),
        from_release=replaced("manifest.json", text if isinstance(text, bytes) else text.encode()),
    )


def _tamper(release: dict) -> dict:
    return {**release, "release.csv": release["release.csv"].replace(b"F", b"M", 1)}


case("tampered release: verify", {}, ("verify", "{d}"), code=1, from_release=_tamper)
case(
    "manifest pointing outside its folder",
    {"elsewhere.csv": PEOPLE},
    ("verify", "{d}/rel"),
    hint="plain file name",
    from_release=lambda r: {f"rel/{k}": v for k, v in edited(output__path="../elsewhere.csv")(r).items()},
)
case("verify with --model on a manifest", {}, ("verify", "{d}", "--model", "k-anonymity:k=2"), from_release=lambda r: r)


# -- signed manifests: an edit since signing, and the key that signed --------------------------------------------------
def _other_key_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def _signer_key(release: dict) -> bytes:
    """The public key that signed a real export (base64 of its raw bytes, a form --public-key reads)."""
    return json.loads(release["manifest.json"])["signed_by"]["public_key"].encode()


SIGNED_EDITS = {  # each weakens or changes the claim; the signature no longer matches
    "k lowered to 1": edited(signed=True, privacy_model__params={"k": 1}),
    "no quasi-identifiers": edited(signed=True, roles__quasi_identifiers=[]),
    "the release's hash replaced": edited(signed=True, output__sha256="0" * 64),
    "a signature that is not base64": edited(signed=True, signature="not a signature!"),
    "signed_by another key": edited(signed=True, signed_by__public_key="A" * 43 + "="),
    "signed_by a short key": edited(signed=True, signed_by__public_key="AAAA"),
    "signed_by an unknown algorithm": edited(signed=True, signed_by__algorithm="RSA"),
}
for name, make in SIGNED_EDITS.items():
    case(f"signed manifest edited: {name}", {}, ("verify", "{d}"), code=1, from_release=make)
    case(
        f"signed manifest edited, report: {name}",
        {},
        ("verify", "{d}", "--public-key", "{d}/key.pub"),
        code=1,
        from_release=lambda r, make=make: {**make(r), "key.pub": _signer_key(r)},
    )
case(
    "--public-key: the signature taken out",
    {},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    code=1,
    hint="not signed",
    from_release=lambda r: {**edited()(r), "key.pub": _signer_key(r)},
)
case(
    "--public-key: another key",
    {},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    code=1,
    hint="not by the given key",
    from_release=lambda r: {**r, "key.pub": _other_key_pem()},
)
case(
    "--public-key: missing",
    {},
    ("verify", "{d}", "--public-key", "{d}/none.pub"),
    hint="none.pub",
    from_release=lambda r: r,
)
case(
    "--public-key: garbage",
    {"key.pub": bytes(range(256))},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    hint="public key",
    from_release=lambda r: r,
)
case(
    "--public-key: a private key",
    {"key.pub": b"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    hint="public key",
    from_release=lambda r: r,
)
case(
    "--public-key: 31 bytes",
    {"key.pub": b"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQQ=="},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    hint="public key",
    from_release=lambda r: r,
)
case(
    "--public-key: a folder",
    {"key.pub/x": b"x"},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    from_release=lambda r: r,
)
case(
    "--public-key: 1 MB",
    {"key.pub": b"A" * 1_000_000},
    ("verify", "{d}", "--public-key", "{d}/key.pub"),
    hint="public key",
    from_release=lambda r: r,
)
case(
    "--public-key with a bare file",
    {"r.csv": PEOPLE, "key.pub": b"x"},
    ("verify", "{d}/r.csv", *("--model", "k-anonymity:k=2"), "--public-key", "{d}/key.pub"),
    hint="--public-key",
)


# -- verify on bare damaged files --------------------------------------------------------------------------------------
VERIFY = ("--model", "k-anonymity:k=2")
case("verify garbage parquet", {"r.parquet": bytes(range(256)) * 4}, ("verify", "{d}/r.parquet", *VERIFY))
case("verify parquet magic only", {"r.parquet": b"PAR1garbagePAR1"}, ("verify", "{d}/r.parquet", *VERIFY))
case("verify truncated xlsx", {"r.xlsx": b"PK\x03\x04\x14\x00\x06\x00" + bytes(100)}, ("verify", "{d}/r.xlsx", *VERIFY))
case("verify ragged csv", {"r.csv": b"a,b,c\n1,2,3\n4,5\n6,7,8,9\n"}, ("verify", "{d}/r.csv", *VERIFY))
case("verify empty csv", {"r.csv": b""}, ("verify", "{d}/r.csv", *VERIFY))
case("verify binary csv", {"r.csv": bytes(range(256)) * 4}, ("verify", "{d}/r.csv", *VERIFY))
case("verify without model", {"r.csv": PEOPLE}, ("verify", "{d}/r.csv"))
case("verify unknown format", {"r.csv": PEOPLE}, ("verify", "{d}/r.csv", *VERIFY, "--format", "docx"))
case("verify unknown extension", {"r.zzz": PEOPLE}, ("verify", "{d}/r.zzz", *VERIFY))
case(
    "verify missing quasi column", {"r.csv": PEOPLE}, ("verify", "{d}/r.csv", *VERIFY, "--quasi", "nope"), hint="'nope'"
)
case("verify missing file", {}, ("verify", "{d}/gone.csv", *VERIFY))
case("verify folder without manifest", {"keep.txt": b"x"}, ("verify", "{d}"))
case("report folder without manifest", {"keep.txt": b"x"}, ("report", "{d}"))


# -- what a killed export leaves: a journal Veil did not write is refused, and nothing is touched ----------------------
# The export folder sits two levels below the case's folder, so "../../victim.txt" is a file of the case.
OUT = "a/b/out"
STAGING = ".veil-staging-planted"
PID = 4242  # the process a planted lock names
VICTIM = b"a file outside the export folder\n"
NOTES = b"the user's own notes, inside the export folder\n"
OUT_RUN = (
    "run",
    "--method",
    "all-features",
    "--metrics",
    "sfc",
    "--no-report",
    "--data",
    "{d}/in.csv",
    *ROLES,
    "--out",
    f"{{d}}/{OUT}",
)
OUT_VERIFY = ("verify", f"{{d}}/{OUT}")


def in_out(release: dict) -> dict:
    """A real export's files in the export folder, with the victims around it."""
    return {
        **{f"{OUT}/{k}": v for k, v in release.items()},
        "in.csv": PEOPLE,
        "victim.txt": VICTIM,
        "a/victim.txt": VICTIM,
        f"{OUT}/notes.txt": NOTES,
        f"{OUT}/sub/notes.txt": NOTES,
    }


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def planted(
    entries: Callable, *, bind: bool = True, pid: int = PID, extra: Callable | None = None, mode: int = 0o700
) -> Callable:
    """A maker of a stale staging folder in the export folder: a lock naming ``PID`` that no process
    holds, an ``old`` folder, and a journal of a commit under way whose fields are ``entries(d)``.
    With ``bind`` the journal names its folder as Veil's does (name and inode) and the lock's process,
    so only what the case changes can make it foreign. ``extra(d, staging)`` adds the rest."""

    def plant(d: Path) -> None:
        staging = d / OUT / STAGING
        staging.mkdir()
        (staging / "old").mkdir()
        (staging / "lock").write_text(str(PID))
        journal = {"state": "committing", "new": {}, "backed_up": [], "remove": [], "pid": pid, **entries(d)}
        if bind:
            journal.setdefault("folder", {"name": STAGING, "inode": os.lstat(staging).st_ino})
        (staging / "journal.json").write_text(json.dumps(journal))
        if extra is not None:
            extra(d, staging)
        os.chmod(staging, mode)

    return plant


UNFINISHED = {"release.zzz": "0" * 64}  # a file the commit had not moved yet: Veil would roll the commit back


def journal_case(
    name: str,
    plant: Callable,
    hint: str,
    *,
    commands=("run", "verify"),
    process: bool = False,
    files: dict | None = None,
) -> None:
    for command in commands:
        case(
            f"journal {command}: {name}",
            files or {},
            OUT_RUN if command == "run" else OUT_VERIFY,
            hint=hint,
            from_release=in_out,
            plant=plant,
            process=process,
        )


journal_case(
    "an absolute path",
    planted(lambda d: {"new": {str(d / "victim.txt"): digest(d / "victim.txt"), **UNFINISHED}}),
    "plain file name",
)
journal_case(
    "a path two levels up",
    planted(lambda d: {"new": {"../../victim.txt": digest(d / "a/victim.txt"), **UNFINISHED}}),
    "plain file name",
)
journal_case(
    "a backup put back outside the folder",
    planted(
        lambda d: {"new": {"../../victim.txt": "0" * 64}, "backed_up": ["../../victim.txt"]},
        extra=lambda d, staging: (d / OUT / "victim.txt").write_bytes(b"attacker's content\n"),
    ),
    "plain file name",
)
journal_case("/dev/zero", planted(lambda d: {"new": {"/dev/zero": "0" * 64}}), "plain file name", process=True)
journal_case(
    "a NUL in a name",
    planted(lambda d: {"new": {"release.csv\x00../../victim.txt": "0" * 64, **UNFINISHED}}),
    "plain file name",
)
journal_case(
    "a path separator",
    planted(lambda d: {"new": {"sub/notes.txt": digest(d / OUT / "sub/notes.txt"), **UNFINISHED}}),
    "plain file name",
)
journal_case("a backslash", planted(lambda d: {"new": {"..\\..\\victim.txt": "0" * 64}}), "plain file name")
journal_case("a staging folder's name", planted(lambda d: {"new": {STAGING: "0" * 64}}), "plain file name")
journal_case(
    "a journal of another folder",
    planted(
        lambda d: {
            "new": {"notes.txt": digest(d / OUT / "notes.txt"), **UNFINISHED},
            "folder": {"name": ".veil-staging-elsewhere", "inode": 12345},
        }
    ),
    "another folder",
)
journal_case(
    "a journal without its folder",
    planted(lambda d: {"new": {"notes.txt": digest(d / OUT / "notes.txt"), **UNFINISHED}}, bind=False),
    "folder",
)
journal_case(
    "a journal of another process",
    planted(lambda d: {"new": {"notes.txt": digest(d / OUT / "notes.txt"), **UNFINISHED}}, pid=777),
    "lock",
)
journal_case(
    "a staging folder others may write to",
    planted(lambda d: {"new": {"notes.txt": digest(d / OUT / "notes.txt"), **UNFINISHED}}, mode=0o777),
    "other users",
)
journal_case(
    "a journal that is not JSON",
    planted(lambda d: {}, extra=lambda d, staging: (staging / "journal.json").write_bytes(b"{not json")),
    "journal",
)
journal_case(
    "a journal with a key twice",
    planted(
        lambda d: {},
        extra=lambda d, staging: (staging / "journal.json").write_bytes(
            b'{"state": "committed", "state": "committing"}'
        ),
    ),
    "journal",
)
journal_case(
    "a huge journal", planted(lambda d: {"new": {f"file-{i:07d}.csv": "0" * 64 for i in range(30_000)}}), "bytes"
)
journal_case(
    "a journal naming thousands of files", planted(lambda d: {"new": {f"f{i}": "0" * 64 for i in range(5000)}}), "1,000"
)


def _link_journal(d: Path, staging: Path) -> None:
    """journal.json as a link to a journal elsewhere (that would delete ../../victim.txt)."""
    real = json.loads((staging / "journal.json").read_bytes())
    (d / "evil.json").write_text(json.dumps(real))
    (staging / "journal.json").unlink()
    (staging / "journal.json").symlink_to(d / "evil.json")


journal_case(
    "a journal that is a link",
    planted(lambda d: {"new": {"../../victim.txt": digest(d / "a/victim.txt"), **UNFINISHED}}, extra=_link_journal),
    "symbolic link",
)


def _link_lock(d: Path, staging: Path) -> None:
    (staging / "lock").unlink()
    (staging / "lock").symlink_to(d / "victim.txt")


journal_case(
    "a lock that is a link",
    planted(lambda d: {"new": {"notes.txt": digest(d / OUT / "notes.txt"), **UNFINISHED}}, extra=_link_lock),
    "symbolic link",
)


def _link_old(d: Path, staging: Path) -> None:
    """old/ as a link to a folder outside, whose release.csv the rollback would move into the export folder."""
    (d / "stash").mkdir()
    (d / "stash/release.csv").write_bytes(VICTIM)
    (staging / "old").rmdir()
    (staging / "old").symlink_to(d / "stash")


journal_case(
    "an old folder that is a link",
    planted(lambda d: {"new": {"release.csv": "0" * 64}, "backed_up": ["release.csv"]}, extra=_link_old),
    "symbolic link",
)


def _staging_link(d: Path) -> None:
    """A staging folder that is a link to a folder outside, holding a journal, a lock and backups."""
    elsewhere = d / "elsewhere"
    (elsewhere / "old").mkdir(parents=True)
    (elsewhere / "old/release.csv").write_bytes(VICTIM)
    (elsewhere / "lock").write_text(str(PID))
    (elsewhere / "journal.json").write_text(
        json.dumps(
            {
                "state": "committing",
                "new": {"release.csv": "0" * 64},
                "backed_up": ["release.csv"],
                "remove": [],
                "pid": PID,
                "folder": {"name": STAGING, "inode": os.lstat(elsewhere).st_ino},
            }
        )
    )
    (d / OUT / STAGING).symlink_to(elsewhere)


journal_case("a staging folder that is a link", _staging_link, "symbolic link")


def _fifo_journal(d: Path) -> None:
    staging = d / OUT / STAGING
    staging.mkdir(mode=0o700)
    (staging / "lock").write_text(str(PID))
    os.mkfifo(staging / "journal.json")


journal_case("a journal that is a FIFO", _fifo_journal, "named pipe", process=True)


def _release_fifo(d: Path, staging: Path | None = None) -> None:
    (d / OUT / "release.csv").unlink()
    os.mkfifo(d / OUT / "release.csv")


journal_case(
    "an entry that is a FIFO",
    planted(lambda d: {"new": {"release.csv": "0" * 64}}, extra=_release_fifo),
    "named pipe",
    commands=("verify",),
    process=True,
)

# -- never open a FIFO, a socket or a device: `veil verify` and `veil report` would wait forever -----------------------
FIFO = "named pipe"


def fifo(*names: str) -> Callable:
    def plant(d: Path) -> None:
        for name in names:
            if (d / name).exists():
                (d / name).unlink()
            os.mkfifo(d / name)

    return plant


for command in ("verify", "report"):
    extra = ("--no-utility",) if command == "report" else ()
    case(
        f"fifo {command}: the release",
        {},
        (command, "{d}", *extra),
        hint=FIFO,
        from_release=lambda r: r,
        plant=fifo("release.csv"),
        process=True,
    )
    case(
        f"fifo {command}: the manifest",
        {},
        (command, "{d}", *extra),
        hint=FIFO,
        from_release=lambda r: r,
        plant=fifo("manifest.json"),
        process=True,
    )
    case(
        f"device {command}: the release a link to /dev/zero",
        {},
        (command, "{d}", *extra),
        hint="character device",
        from_release=lambda r: {k: v for k, v in r.items() if k != "release.csv"},
        links={"release.csv": "/dev/zero"},
        process=True,
    )
case(
    "fifo verify: a report beside the release",
    {},
    ("verify", "{d}"),
    hint=FIFO,
    from_release=lambda r: r,
    plant=fifo("report.html"),
    process=True,
)
case("fifo verify: a bare release", {}, ("verify", "{d}/r.csv", *VERIFY), hint=FIFO, plant=fifo("r.csv"), process=True)
HIERARCHY = "20-29;*\n30-39;*\n40-49;*\n"
case(
    "fifo run: a hierarchy file",
    {"in.csv": PEOPLE},
    (*FILE_RUN, *ROLES, "--hierarchy", "age_band={d}/h.csv"),
    hint=FIFO,
    plant=fifo("h.csv"),
    process=True,
)
case(
    "fifo run: a project file",
    {"in.csv": PEOPLE},
    ("run", "{d}/p.json", "--out", "{d}/out"),
    hint=FIFO,
    plant=fifo("p.json"),
    process=True,
)
case(
    "fifo study: the study file",
    {"in.csv": PEOPLE},
    ("study", "{d}/s.json", "--out", "{d}/out"),
    hint=FIFO,
    plant=fifo("s.json"),
    process=True,
)
case("fifo inspect: the data", {}, ("inspect", "{d}/in.csv"), hint=FIFO, plant=fifo("in.csv"), process=True)
case(
    "fifo run: --names-from",
    {"in.csv": PEOPLE.split(b"\n", 1)[1]},
    (*FILE_RUN, "--names-from", "{d}/names.txt"),
    hint=FIFO,
    plant=fifo("names.txt"),
    process=True,
)

# -- an input of the run where the export would write: refused, naming it ----------------------------------------------
HEADER, BODY = PEOPLE.split(b"\n", 1)
for member in ("release.csv", "manifest.json"):
    case(
        f"input in the output folder: a hierarchy as {member}",
        {"in.csv": PEOPLE, f"out/{member}": HIERARCHY},
        (*FILE_RUN, *ROLES, "--hierarchy", f"age_band={{d}}/out/{member}"),
        hint=f"hierarchy file {{d}}/out/{member}",
    )
case(
    "input in the output folder: --names-from as release.csv",
    {"in.csv": BODY, "out/release.csv": HEADER + b"\n"},
    (*FILE_RUN, *ROLES, "--names-from", "{d}/out/release.csv"),
    hint="input file {d}/out/release.csv",
)
case(
    "input in the output folder: a project's hierarchy as release.csv",
    {
        "in.csv": PEOPLE,
        "out/release.csv": HIERARCHY,
        "p.json": project(data={**OK_DATA, "hierarchies": {"age_band": "out/release.csv"}}),
    },
    ("run", "{d}/p.json", "--out", "{d}/out"),
    hint="hierarchy file {d}/out/release.csv",
)
case(
    "input in the output folder: a project of two runs, a hierarchy as run-2/release.parquet",
    {
        "in.csv": PEOPLE,
        "out/run-2/release.parquet": HIERARCHY,
        "p.json": project(
            data={**OK_DATA, "hierarchies": {"age_band": "out/run-2/release.parquet"}}, runs=[OK_RUN, OK_RUN]
        ),
    },
    ("run", "{d}/p.json", "--out", "{d}/out"),
    hint="hierarchy file {d}/out/run-2/release.parquet",
)
case(
    "input in the output folder: the data as report.pdf",
    {"out/report.pdf": PEOPLE},
    (
        "run",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--data",
        "{d}/out/report.pdf",
        "--input-format",
        "csv",
        *ROLES,
        "--out",
        "{d}/out",
    ),
    hint="input file {d}/out/report.pdf",
)
case(
    "input in the output folder: a study's data as results.csv",
    {"out/results.csv": PEOPLE, "s.json": study(data={**STUDY_DATA, "path": "out/results.csv"})},
    ("study", "{d}/s.json", "--out", "{d}/out"),
    hint="input file {d}/out/results.csv",
)
case(
    "input in the output folder: a study's hierarchy as a chart's data",
    {
        "in.csv": PEOPLE,
        "out/chart-1-metric-bars.csv": HIERARCHY,
        "s.json": study(
            data={**STUDY_DATA, "hierarchies": {"age_band": "out/chart-1-metric-bars.csv"}},
            charts=[{"name": "metric-bars", "params": {"metric": "sfc"}}],
        ),
    },
    ("study", "{d}/s.json", "--out", "{d}/out"),
    hint="hierarchy file {d}/out/chart-1-metric-bars.csv",
)
case(
    "input in the output folder: the study file as results.csv",
    {"in.csv": PEOPLE, "out/results.csv": study()},
    ("study", "{d}/out/results.csv", "--out", "{d}/out"),
    hint="study file {d}/out/results.csv",
)

# -- a parameter given twice, an empty --quasi, a line break as delimiter ----------------------------------------------
case(
    "parameter twice: k=50,k=2",
    {"in.csv": PEOPLE},
    (*FILE_RUN, *ROLES, "--model", "k-anonymity:k=50,k=2"),
    hint="'k' is given twice",
)
case(
    "parameter twice: in a method",
    {"in.csv": PEOPLE},
    ("run", "--method", "all-features:a=1, a=2", "--data", "{d}/in.csv", "--out", "{d}/out"),
    hint="'a' is given twice",
)
case(
    "parameter twice: in a verified model",
    {"r.csv": PEOPLE},
    ("verify", "{d}/r.csv", "--model", "k-anonymity:k=13,k=1"),
    hint="'k' is given twice",
)
for flag, values in {
    "--seed": ("1", "2"),
    "--out": ("{d}/out", "{d}/other"),
    "--format": ("csv", "tsv"),
    "--risk-threshold": ("0.2", "0.5"),
    "--target": ("outcome", "smoker"),
    "--delimiter": (",", ";"),
    "--encoding": ("utf-8", "latin-1"),
    "--skip-rows": ("0", "1"),
    "--metrics": ("sfc", "auc"),
}.items():
    case(
        f"option twice: {flag}",
        {"in.csv": PEOPLE},
        (*FILE_RUN, flag, values[0], flag, values[1]),
        hint=f"{flag} is given twice",
    )
case(
    "option twice: --data",
    {"in.csv": PEOPLE, "other.csv": PEOPLE},
    (*FILE_RUN, "--data", "{d}/other.csv"),
    hint="--data is given twice",
)
case(
    "option twice: --method",
    {"in.csv": PEOPLE},
    (*FILE_RUN, "--method", "laplace-dp-fs"),
    hint="--method is given twice",
)
case(
    "option twice: verify --format",
    {"r.csv": PEOPLE},
    ("verify", "{d}/r.csv", *VERIFY, "--format", "csv", "--format", "tsv"),
    hint="--format is given twice",
)
case(
    "two hierarchies for one column",
    {"in.csv": PEOPLE, "h1.csv": HIERARCHY, "h2.csv": HIERARCHY},
    (*FILE_RUN, *ROLES, "--hierarchy", "age_band={d}/h1.csv", "--hierarchy", "age_band={d}/h2.csv"),
    hint="'age_band'",
)
for flag in ("--quasi", "--identifier", "--sensitive"):
    for empty in ("", ",", " , "):
        case(f"empty {flag} {empty!r}", {"in.csv": PEOPLE}, (*FILE_RUN, flag, empty), hint=flag)
case("empty verify --quasi", {"r.csv": PEOPLE}, ("verify", "{d}/r.csv", *VERIFY, "--quasi", ""), hint="--quasi")
case("empty --names", {"in.csv": BODY}, ("inspect", "{d}/in.csv", "--names", ""), hint="--names")
for delimiter in ("\n", "\r", "\r\n", "\x0b", "\x0c", "\x1e", "\x85", "\u2028", "a\nb"):
    case(
        f"delimiter {delimiter!r}: inspect",
        {"in.csv": PEOPLE},
        ("inspect", "{d}/in.csv", "--delimiter", delimiter),
        hint="line break",
    )
case("delimiter line break: run", {"in.csv": PEOPLE}, (*FILE_RUN, "--delimiter", "\n"), hint="line break")
case(
    "delimiter line break: transactions",
    {"in.dat": b"1 2 3\n2 3\n"},
    ("inspect", "{d}/in.dat", "--delimiter", "\n"),
    hint="line break",
)
case(
    "delimiter line break: a project",
    {"in.csv": PEOPLE, "p.json": project(data={**OK_DATA, "delimiter": "\n"})},
    ("run", "{d}/p.json", "--out", "{d}/out"),
    hint="line break",
)
DUPLICATE_K = (
    '{"veil_project": 1, "data": {"path": "in.csv", "identifiers": ["name"], "quasi_identifiers": '
    '["age_band", "sex"], "target": "outcome"}, "runs": [{"method": "all-features", "metrics": ["sfc"], '
    '"model": {"name": "k-anonymity", "params": {"k": 50, "k": 2}}}]}'
)
case(
    "project: a parameter twice",
    {"in.csv": PEOPLE, "p.json": DUPLICATE_K},
    ("run", "{d}/p.json", "--out", "{d}/out"),
    hint="'k' is given twice",
)
case(
    "study: a key twice",
    {"in.csv": PEOPLE, "s.json": json.dumps(study())[:-1] + ', "model": "k-anonymity"}'},
    ("study", "{d}/s.json", "--out", "{d}/out"),
    hint="'model' is given twice",
)
for flag, value in {
    "--seed": "3",
    "--quasi": "sex",
    "--target": "outcome",
    "--delimiter": ";",
    "--hierarchy": "age_band={d}/h.csv",
    "--drop-missing": None,
}.items():
    case(
        f"project with {flag}",
        {"in.csv": PEOPLE, "p.json": project(), "h.csv": HIERARCHY},
        ("run", "{d}/p.json", "--out", "{d}/out", flag, *((value,) if value else ())),
        hint=flag,
    )


# -- item-set files: read by their grammar, refused when they are neither transactions nor a table ---------------------
NEITHER = {  # lines of different lengths (so no table) holding a field no transaction holds
    "a negative id": (b"1 2 3\n4 -5\n6 7 8 9\n", "'-5', a negative number"),
    "a fractional id": (b"1 2 3\n4 5.5\n6 7 8 9\n", "'5.5', not a whole number"),
    "an id in exponent form": (b"1 2 3\n4 5e3\n6 7\n", "'5e3', not a whole number"),
    "a quoted id": (b'1 2 3\n"4" 5\n6 7 8 9\n', "a quoted field"),
    "a quoted first line": (b'"1" "2" "3"\n4 5\n6 7 8 9\n', "a quoted field"),
    "a negative id, comma-separated": (b"1,2,3\n4,-5\n6,7,8,9\n", "'-5', a negative number"),
}
for name, (content, hint) in NEITHER.items():
    for ext in ("dat", "spmf", "txt"):
        case(f"item sets: {name} (.{ext})", {f"in.{ext}": content}, ("inspect", f"{{d}}/in.{ext}"), hint=hint)
    case(
        f"item sets: {name}, run",
        {"in.dat": content},
        ("run", "--method", "patternka", "--model", "set-k-anonymity:k=2", "--data", "{d}/in.dat", "--out", "{d}/out"),
        hint=hint,
    )
case(
    "skip-rows 10**30",
    {"in.csv": PEOPLE},
    ("inspect", "{d}/in.csv", "--skip-rows", str(10**30)),
    hint="leaves nothing to read",
    process=True,
)
case(
    "skip-rows 10**30 on item sets",
    {"in.dat": b"1 2\n3\n"},
    ("inspect", "{d}/in.dat", "--skip-rows", str(10**30)),
    process=True,
)


# -- internal errors that must be one line: nested parquet, no columns, only identifiers, ±1e308 -----------------------
def _parquet(columns: dict, types: dict | None = None) -> bytes:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    arrays = {n: pa.array(v, type=(types or {}).get(n)) for n, v in columns.items()}
    pq.write_table(pa.table(arrays) if arrays else pa.table({}), buffer)
    return buffer.getvalue()


def _map_type():
    import pyarrow as pa

    return pa.map_(pa.string(), pa.int64())


PARQUETS = {
    "a list column": (lambda: _parquet({"a": [[1, 2], [3]], "b": [1, 2]}), "'a' holds lists"),
    "a struct column": (lambda: _parquet({"a": [{"x": 1}, {"x": 2}], "b": [1, 2]}), "'a' holds records"),
    "a map column": (
        lambda: _parquet({"a": [[("k", 1)], [("j", 2)]], "b": [1, 2]}, {"a": _map_type()}),
        "'a' holds key–value maps",
    ),
    "a list of lists column": (lambda: _parquet({"b": [1, 2], "a": [[[1]], [[2]]]}), "'a' holds lists"),
    "no columns": (lambda: _parquet({}), "no columns"),
    "no records": (lambda: _parquet({"a": []}, {"a": __import__("pyarrow").int64()}), "no records"),
}
for name, (make, hint) in PARQUETS.items():
    case(f"parquet with {name}: inspect", {"in.parquet": make()}, ("inspect", "{d}/in.parquet"), hint=hint)
    case(
        f"parquet with {name}: run",
        {"in.parquet": make()},
        ("run", "--method", "all-features", "--metrics", "sfc", "--data", "{d}/in.parquet", "--out", "{d}/out"),
        hint=hint,
    )
case(
    "every column an identifier",
    {"in.csv": PEOPLE},
    (*FILE_RUN, "--identifier", "name,age_band,sex,postcode,smoker,outcome"),
    hint="every column is marked identifier",
)
HUGE = b"x,y,z\n1e308,a,0\n-1e308,b,1\n1e308,a,0\n-1e308,b,1\n5,a,1\n6,b,0\n"
for method in ("mondrian", "global-recoding"):
    case(
        f"±1e308 in a numeric quasi-identifier: {method}",
        {"in.csv": HUGE},
        (
            "run",
            "--data",
            "{d}/in.csv",
            "--quasi",
            "x,y",
            "--method",
            method,
            "--model",
            "k-anonymity:k=2",
            "--no-report",
            "--out",
            "{d}/out",
        ),
        hint="'x'",
        process=True,
    )
for params in ("l=1e308", "l=1e308,variant=recursive,c=1e308", "l=1e308,variant=entropy"):
    case(
        f"l-diversity {params}: no warning",
        {"in.csv": PEOPLE},
        (
            "run",
            "--data",
            "{d}/in.csv",
            "--identifier",
            "name",
            "--quasi",
            "age_band,sex",
            "--sensitive",
            "outcome",
            "--method",
            "mondrian",
            "--model",
            f"l-diversity:{params}",
            "--release-sensitive",
            "outcome",
            "--no-report",
            "--out",
            "{d}/out",
        ),
        hint="l-diversity",
        process=True,
    )


# -- a randomised method that may release a sensitive column: asked before the run -------------------------------------
for method in ("laplace-dp-fs", "exponential-dp-fs", "laplace-dp-fs:m=1"):
    case(
        f"unagreed sensitive column, {method}: refused before the run",
        {"in.csv": PEOPLE},
        (
            "run",
            "--data",
            "{d}/in.csv",
            "--identifier",
            "name",
            "--sensitive",
            "smoker",
            "--target",
            "outcome",
            "--method",
            method,
            "--no-report",
            "--out",
            "{d}/out",
        ),
        hint="asked before the run",
    )


# -- a project's runs: counted and each checked before the first starts ------------------------------------------------
MANY = [OK_RUN] * 10_001
case(
    "project of 10,001 runs",
    {"in.csv": PEOPLE, "p.json": project(runs=MANY)},
    ("run", "{d}/p.json", "--out", "{d}/out"),
    hint="more than the limit of 10,000",
)
case(
    "project above its --max-runs",
    {"in.csv": PEOPLE, "p.json": project(runs=[OK_RUN] * 3)},
    ("run", "{d}/p.json", "--out", "{d}/out", "--max-runs", "2"),
    hint="more than the limit of 2",
)
case("--max-runs without a project", {"in.csv": PEOPLE}, (*FILE_RUN, "--max-runs", "5"), hint="--max-runs")
case(
    "--max-runs 0",
    {"in.csv": PEOPLE, "p.json": project()},
    ("run", "{d}/p.json", "--out", "{d}/out", "--max-runs", "0"),
    hint="--max-runs",
)
for what, last in {
    "an unknown method": {"method": "no-such-method"},
    "an unknown metric": {**OK_RUN, "metrics": ["beauty"]},
    "a bad method parameter": {"method": {"name": "laplace-dp-fs", "params": {"m": 99}}},
    "an unknown model": {**OK_RUN, "model": "no-such-model"},
    "a method without its model": {"method": "mondrian"},
}.items():
    case(
        f"project whose last run has {what}",
        {"in.csv": PEOPLE, "p.json": project(runs=[OK_RUN] * 5 + [last])},
        ("run", "{d}/p.json", "--out", "{d}/out"),
        hint="run 6 of 6",
    )


# -- messages that misled ----------------------------------------------------------------------------------------------
HIERARCHY_RUN = (*FILE_RUN, *ROLES, "--model", "k-anonymity:k=2", "--hierarchy", "age_band={d}/h.csv")
for name, content, hint in (
    ("random bytes", bytes((i * 37 + 11) % 256 for i in range(3000)), "binary data"),
    ("an xlsx workbook", b"PK\x03\x04\x14\x00\x06\x00" + bytes(200), "Excel workbook"),
    ("a PDF", b"%PDF-1.4\n" + bytes(100), "a PDF document"),
    ("NUL bytes and carriage returns", b"20-29\x00;*\r\n30-39;*\r", "binary data"),
):
    case(f"hierarchy file of {name}", {"in.csv": PEOPLE, "h.csv": content}, HIERARCHY_RUN, hint=hint)
case(
    "hierarchy /dev/zero",
    {"in.csv": PEOPLE},
    (*FILE_RUN, *ROLES, "--hierarchy", "age_band=/dev/zero"),
    hint="character device",
    process=True,
)
case(
    "--out a symbolic link loop",
    {"in.csv": PEOPLE},
    (*FILE_RUN[:-1], "{d}/loop"),
    links={"loop": "loop2", "loop2": "loop"},
    hint="symbolic link loop",
)
case(
    "--out a dangling symbolic link",
    {"in.csv": PEOPLE},
    (*FILE_RUN[:-1], "{d}/gone"),
    links={"gone": "nowhere"},
    hint="does not exist",
)


case(
    "verify a bucketised release without its second file",
    {"r.csv": b"group,age,zip\n1,20,1\n1,21,1\n2,30,2\n2,31,2\n"},
    ("verify", "{d}/r.csv", "--model", "l-diversity:l=2", "--sensitive", "disease"),
    hint="r.sensitive.csv",
)


case(
    "hierarchy of 400,000 leaves and 3 levels",
    {"in.csv": PEOPLE, "h.csv": "".join(f"v{i};g{i // 1000};*\n" for i in range(400_000))},
    HIERARCHY_RUN,
    hint="1,000,000 cells",
    process=True,
)
case(
    "hierarchy of 1,000 levels",
    {
        "in.csv": PEOPLE,
        "h.csv": "".join(
            ";".join([band, *(f"l{j}" for j in range(999)), "*"]) + "\n" for band in ("20-29", "30-39", "40-49")
        ),
    },
    HIERARCHY_RUN,
    hint="1,000 levels",
    process=True,
)


def _workbook(rows: list, formula_at: str | None = None) -> bytes:
    import io

    import openpyxl

    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    if formula_at:
        book.active[formula_at] = "=1+1"  # openpyxl writes no cached value, as many generators do
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


case(
    "xlsx formula cell without a computed value",
    {"in.xlsx": lambda: _workbook([["age", "sex"], [20, "F"], [30, "M"]], formula_at="A3")},
    ("inspect", "{d}/in.xlsx"),
    hint="cell A3",
)


def _left_by_a_killed_first_export(d: Path) -> None:
    (d / "out").mkdir()
    staging = d / "out" / ".veil-staging-killed"
    staging.mkdir(mode=0o700)
    (staging / "new").mkdir(mode=0o700)
    (staging / "new" / "release.csv").write_bytes(PEOPLE)


case(
    "verify after a killed first export",
    {},
    ("verify", "{d}/out"),
    hint=".veil-staging-killed",
    plant=_left_by_a_killed_first_export,
)


# -- files Veil writes: only a regular file replaced, never through a link, never in a folder others may write ---------
SIGNED_RUN = (*FILE_RUN, *ROLES, "--model", "k-anonymity:k=2")
SETTINGS = {"VEIL_SETTINGS_DIR": "{d}/settings"}


def settings_folder(mode: int = 0o700, pub: bytes | None = None, pub_link: str | None = None) -> Callable:
    """A settings folder of the given mode holding a signing key; its public half ``pub`` (another
    key's when None and no link) or a link to ``pub_link``."""

    def plant(d: Path) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        folder = d / "settings"
        folder.mkdir(mode=0o700)
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        (folder / "release-signing-key.pem").write_bytes(pem)
        os.chmod(folder / "release-signing-key.pem", 0o600)
        if pub_link is not None:
            (folder / "release-signing-key.pub").symlink_to(pub_link.replace("{d}", str(d)))
        else:
            other = pub or Ed25519PrivateKey.generate().public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            (folder / "release-signing-key.pub").write_bytes(other)
        os.chmod(folder, mode)

    return plant


def made(kind: str, name: str, mode: int = 0o755) -> Callable:
    """Plant a FIFO, a character device (a copy of /dev/null's numbers), a folder or a mode-``mode`` folder."""

    def plant(d: Path) -> None:
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "device":
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        else:
            path.mkdir(exist_ok=True)
            os.chmod(path, mode)

    return plant


IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
case(
    "settings: a folder anyone may write",
    {"in.csv": PEOPLE},
    SIGNED_RUN,
    hint="may be written by other users",
    env=SETTINGS,
    plant=made("folder", "settings", 0o777),
)
case("settings: a file", {"in.csv": PEOPLE, "settings": b"not a folder"}, SIGNED_RUN, hint="not a folder", env=SETTINGS)
case(
    "settings: /dev/null",
    {"in.csv": PEOPLE},
    SIGNED_RUN,
    hint="character device",
    env={"VEIL_SETTINGS_DIR": "/dev/null"},
)
case(
    "settings: the public key another key's",
    {"in.csv": PEOPLE},
    SIGNED_RUN,
    hint="is not the half of the signing key",
    env=SETTINGS,
    plant=settings_folder(),
)
case(
    "settings: the public key not a key",
    {"in.csv": PEOPLE},
    SIGNED_RUN,
    hint="is not the half of the signing key",
    env=SETTINGS,
    plant=settings_folder(pub=b"-----BEGIN PUBLIC KEY-----\ngarbage\n-----END PUBLIC KEY-----\n"),
)
case(
    "settings: the public key a link to a file outside",
    {"in.csv": PEOPLE, "victim.txt": b"not Veil's\n"},
    SIGNED_RUN,
    hint="symbolic link",
    env=SETTINGS,
    plant=settings_folder(pub_link="{d}/victim.txt"),
)
HIERARCHY_OUT = ("hierarchy", "{d}/in.csv", "--column", "age_band", "--build", "masking", "--out")
for kind, hint in (("fifo", FIFO), ("device", "character device"), ("folder", "a folder")):
    if kind != "device" or IS_ROOT:
        case(
            f"hierarchy --out a {kind}",
            {"in.csv": PEOPLE},
            (*HIERARCHY_OUT, "{d}/h.csv"),
            hint=hint,
            plant=made(kind, "h.csv"),
        )
case(
    "hierarchy --out a link to a file outside",
    {"in.csv": PEOPLE, "victim.txt": b"not Veil's\n"},
    (*HIERARCHY_OUT, "{d}/h.csv"),
    hint="symbolic link",
    links={"h.csv": "victim.txt"},
)
case("hierarchy --out .", {"in.csv": PEOPLE}, (*HIERARCHY_OUT, "."), hint="a folder")
case(
    "hierarchy --out in a folder anyone may write",
    {"in.csv": PEOPLE},
    (*HIERARCHY_OUT, "{d}/shared/h.csv"),
    hint="may be written by anyone",
    plant=made("folder", "shared", 0o777),
)
case(
    "run --out a folder anyone may write",
    {"in.csv": PEOPLE},
    (*RUN[:-1], "{d}/shared", "--data", "{d}/in.csv", *ROLES),
    hint="may be written by anyone",
    plant=made("folder", "shared", 0o777),
)
for kind, hint in (("fifo", FIFO), ("device", "character device"), ("folder", "a folder")):
    if kind != "device" or IS_ROOT:
        case(
            f"run: release.csv in the output folder a {kind}",
            {"in.csv": PEOPLE},
            (*FILE_RUN, *ROLES),
            hint=hint,
            plant=made(kind, "out/release.csv"),
        )


# -- what `veil verify` takes in: a file beside the release is never read silently, and is named -----------------------
UNIQUE_IN_GROUPS = "group,age,sex,zip\n" + "".join(
    f"{i // 5 + 1},{20 + i},{'FM'[i % 2]},{1000 + i}\n" for i in range(20)
)
case(
    "verify a bare file: a part beside it regroups 20 unique records",
    {
        "release.csv": UNIQUE_IN_GROUPS,
        "release.sensitive.csv": "group,disease\n" + "1,flu\n2,cold\n3,flu\n4,cold\n" * 5,
    },
    ("verify", "{d}/release.csv", "--model", "k-anonymity:k=5", "--quasi", "age,sex,zip"),
    code=1,
    hint="release.sensitive.csv lies beside it and was not read",
)
case(
    "verify a bare file: --with-parts without a part",
    {"release.csv": UNIQUE_IN_GROUPS},
    ("verify", "{d}/release.csv", "--model", "k-anonymity:k=5", "--with-parts"),
    hint="no part file lies beside release.csv",
)
for stray, content in (
    ("release.tsv", b"name\tage_band\nAnn\t20-29\n"),
    ("release.sensitive.csv", b"group,outcome\n1,0\n"),
    ("release.part-99999.csv", SMALL_CSV.encode()),
):
    case(
        f"verify an export with a stray {stray} beside it",
        {stray: content},
        ("verify", "{d}"),
        code=1,
        hint=f"{stray} lies beside the release but is not part of the export",
        from_release=lambda r: r,
    )
case(
    "manifest verify: a part named ../..",
    {},
    ("verify", "{d}"),
    hint="output parts must map plain words",
    from_release=edited(output__parts={"../..": {"path": "x.csv", "sha256": "0" * 64}}),
)
case(
    "manifest verify: a part's path ../in.csv",
    {},
    ("verify", "{d}"),
    hint="a part's path must be a plain file name",
    from_release=edited(output__parts={"sensitive": {"path": "../in.csv", "sha256": "0" * 64}}),
)


# -- an estimator never makes a model weaker than its plainest form ---------------------------------------------------
case(
    "verify entropy l-diversity by Grassberger's estimate on groups of one record",
    {
        "r.csv": "age,sex,zip,occupation\n"
        + "".join(f"{20 + i},{'FM'[i % 2]},{1000 + i},job{i % 4}\n" for i in range(20))
    },
    (
        "verify",
        "{d}/r.csv",
        "--quasi",
        "age,sex,zip",
        "--sensitive",
        "occupation",
        "--model",
        "l-diversity:l=3,variant=entropy,estimator=grassberger",
    ),
    code=1,
    hint="effective l 1",
)


# -- a population model never judges by an assumption the user did not make -------------------------------------------
case(
    "k-map without a population or a sampling fraction",
    {"in.csv": PEOPLE},
    (*FILE_RUN, "--quasi", "postcode", "--model", "k-map:k=5"),
    hint="never assumes",
)
case(
    "verify k-map without a population or a sampling fraction",
    {"r.csv": PEOPLE},
    ("verify", "{d}/r.csv", "--quasi", "postcode", "--model", "k-map:k=5"),
    hint="never assumes",
)


# -- generated hierarchies: the limits a hierarchy file has, and numbers a build cannot use ----------------------------
MANY_NUMBERS = "x,y\n" + "".join(f"{i * 0.37 + 0.001:.3f},{i % 2}\n" for i in range(30_000))
FEW_NUMBERS = "x,y\n" + "".join(f"{i * 1.5},{i % 2}\n" for i in range(50))
case(
    "hierarchy of intervals too fine for 30,000 numbers",
    {"in.csv": MANY_NUMBERS},
    ("hierarchy", "{d}/in.csv", "--column", "x", "--build", "intervals:width=0.000001", "--out", "{d}/h.csv"),
    hint="1,000,000 cells",
)
for build, hint in (
    ("intervals:width=1e-300", "choose a larger width"),
    ("intervals:width=1,start=1e308", "choose a larger width"),
    ("dates", "not a date"),  # a real process: pandas' warning would reach its stderr
):
    case(
        f"hierarchy {build} on numbers",
        {"in.csv": FEW_NUMBERS},
        ("hierarchy", "{d}/in.csv", "--column", "x", "--build", build, "--out", "{d}/h.csv"),
        hint=hint,
        process=build == "dates",
    )


# -- a signed manifest: a field added under any name is an edit --------------------------------------------------------
case(
    "manifest verify: a field starting with _ added to a signed manifest",
    {},
    ("verify", "{d}"),
    code=1,
    hint="changed after it was signed",
    from_release=edited(signed=True, _note="k was 50"),
)
case(
    "manifest verify: a _dir field in the file",
    {},
    ("verify", "{d}"),
    hint="'_dir'",
    from_release=edited(_dir="/etc"),
)


# -- a population that is not a regular file is named for what it is ---------------------------------------------------
POPULATION_RUN = (*FILE_RUN, "--quasi", "age_band,sex", "--model", "k-map:k=2")
case(
    "--population a folder",
    {"in.csv": PEOPLE, "pop/keep.txt": b"x"},
    (*POPULATION_RUN, "--population", "{d}/pop"),
    hint="is a folder",
)
case(
    "--population /dev/zero",
    {"in.csv": PEOPLE},
    (*POPULATION_RUN, "--population", "/dev/zero"),
    hint="character device",
    process=True,
)
case(
    "--population a FIFO",
    {"in.csv": PEOPLE},
    (*POPULATION_RUN, "--population", "{d}/pop.csv"),
    hint=FIFO,
    plant=fifo("pop.csv"),
    process=True,
)
case(
    "verify --population a folder",
    {"r.csv": PEOPLE, "pop/keep.txt": b"x"},
    ("verify", "{d}/r.csv", "--quasi", "age_band,sex", "--model", "k-map:k=2", "--population", "{d}/pop"),
    hint="is a folder",
)


# -- a column kind set by the user names a column that holds values of that kind ---------------------------------------
for given, hint in (
    ("sex=numeric", "such as 'F'"),
    ("nope=numeric", "no such column"),
    ("outcome=numeric,name=numeric", "such as 'Ann'"),
    ("sex=binary", "which is not 0 or 1"),
):
    case(
        f"--kind {given}",
        {"in.csv": PEOPLE},
        (*FILE_RUN, *[a for kind in given.split(",") for a in ("--kind", kind)]),
        hint=hint,
    )


# -- `veil report` regenerates only an intact manifest -----------------------------------------------------------------
case(
    "report of a signed manifest edited since",
    {},
    ("report", "{d}", "--no-utility"),
    hint="regenerates only an intact manifest",
    from_release=edited(signed=True, privacy_model__params={"k": 1}),
)


# -- a Spark master that is none Spark takes is refused before Spark starts --------------------------------------------
case(
    "spark master a shell command",
    {"in.dat": b"1 2 3\n1 2\n2 3 4\n1 3\n"},
    (
        "run",
        "--data",
        "{d}/in.dat",
        "--method",
        "patternka:executor=spark,spark_master=$(touch pwned)",
        "--model",
        "set-k-anonymity:k=2",
        "--no-report",
        "--out",
        "{d}/out",
    ),
    hint="is not a Spark master",
)


case(
    "verify a release of one file --executor spark",
    {},
    ("verify", "{d}", "--executor", "spark"),
    hint="counts a release in parts",
    from_release=lambda r: r,
)


# -- running the cases -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def release_files(tmp_path_factory) -> dict:
    """The files of a real export of the twelve-record table (2-anonymous on age band and sex)."""
    folder = tmp_path_factory.mktemp("release")
    (folder / "in.csv").write_bytes(PEOPLE)
    code = main(
        [
            "run",
            "--data",
            str(folder / "in.csv"),
            *ROLES,
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--model",
            "k-anonymity:k=2",
            "--no-report",
            "--out",
            str(folder / "out"),
        ]
    )
    assert code == 0
    return {p.name: p.read_bytes() for p in (folder / "out").iterdir()}


def write_case(folder: Path, c: Case) -> None:
    for name, content in c.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content = content()
        if isinstance(content, (dict, list)):
            content = json.dumps(content).encode()
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for name, points_to in c.links.items():
        (folder / name).symlink_to(points_to)


def snapshot(folder: Path) -> dict:
    """Every entry below ``folder``, hidden ones included, none followed or opened unless a regular file:
    a file by its SHA-256, a link by its target, a folder, FIFO or device by its kind."""
    found = {}
    for root, dirs, files in os.walk(folder):  # links to folders are listed, never entered
        for name in (*dirs, *files):
            p = Path(root) / name
            mode = os.lstat(p).st_mode
            if stat.S_ISREG(mode):
                found[p.relative_to(folder)] = sha256(p)
            elif stat.S_ISLNK(mode):
                found[p.relative_to(folder)] = f"link to {os.readlink(p)}"
            else:
                found[p.relative_to(folder)] = stat.filemode(mode)
    return found


def check(c: Case, result: Outcome, folder: Path, before: dict) -> None:
    text = result.out + result.err
    assert "Traceback" not in text and "internal error" not in text, text
    assert result.code == c.code, (result.code, text)
    if c.code == 2:
        # one error line; a note said before the run (a hierarchy the method will not use, how a file was read)
        # may precede it
        lines = result.err.splitlines()
        notes = [line for line in lines if line.startswith("note: ")]
        assert lines[: len(notes)] == notes and len(lines) == len(notes) + 1, result.err
        assert lines[-1].startswith("veil: error: ") and all("hierarch" in n or " was read as " in n for n in notes), (
            result.err
        )
    else:  # a release that fails verification: one FAILED line, or one line saying what changed
        lines = [line for line in text.splitlines() if not line.startswith(str(folder))]
        assert len(lines) == 1, text
    if c.hint:
        assert c.hint.replace("{d}", str(folder)) in (result.err if c.code == 2 else text), text
    assert snapshot(folder) == before  # every entry as it was: nothing written, removed, replaced or added


def run_case(c: Case, folder: Path, capsys) -> Outcome:
    argv = [a.replace("{d}", str(folder)) for a in c.argv]
    capsys.readouterr()
    code = main(argv)
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


def materialise(c: Case, release: dict) -> Case:
    if c.from_release is None:
        return c
    return dataclasses.replace(c, files={**c.from_release(release), **c.files})


@pytest.fixture(scope="module")
def registry():
    return make_registry()


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_gets_a_clear_answer(name, tmp_path, capsys, release_files, registry, monkeypatch, veil_process):
    c = materialise(CASES[name], release_files)
    monkeypatch.setattr(
        cli, "make_registry", lambda plugins=(): registry
    )  # loading the plugins 300 times would dominate
    monkeypatch.chdir(tmp_path)
    for variable, value in c.env.items():
        monkeypatch.setenv(variable, value.replace("{d}", str(tmp_path)))
    write_case(tmp_path, c)
    if c.plant is not None:
        c.plant(tmp_path)
    before = snapshot(tmp_path)
    if c.process:
        result = veil_process(*[a.replace("{d}", str(tmp_path)) for a in c.argv])
    else:
        result = run_case(c, tmp_path, capsys)
    check(c, result, tmp_path, before)


def test_the_corpus_is_large():
    assert len(CASES) >= 150


# -- a few through real processes: the installed entry point, stdin closed, no terminal --------------------------------
@pytest.mark.parametrize(
    "name", ["project: nested 100,000 deep in lists", "role conflict: quasi and target", "verify truncated xlsx"]
)
def test_through_a_real_process(name, tmp_path, veil_process):
    c = CASES[name]
    write_case(tmp_path, c)
    before = snapshot(tmp_path)
    result = veil_process(*[a.replace("{d}", str(tmp_path)) for a in c.argv])
    check(c, result, tmp_path, before)


def test_symbolic_links_are_followed_not_replaced(tmp_path, capsys):
    (tmp_path / "real.csv").write_bytes(BAD_DATA["ragged short row"])
    (tmp_path / "link.csv").symlink_to("real.csv")
    before = snapshot(tmp_path)
    result = run_case(Case({}, ("inspect", "{d}/link.csv")), tmp_path, capsys)
    assert result.code == 2 and "line 3" in result.err
    assert snapshot(tmp_path) == before and (tmp_path / "link.csv").is_symlink()


# -- the output folder: links replaced, never written through; a report never opens a FIFO -----------------------------
def changed(before: dict, after: dict) -> dict:
    """Every entry added, removed or changed between two snapshots: what a command wrote."""
    return {p: after.get(p) for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def test_links_in_the_output_folder_are_replaced_not_written_through(tmp_path, veil):
    (tmp_path / "in.csv").write_bytes(PEOPLE)
    out = tmp_path / "out"
    out.mkdir()
    members = ("release.csv", "manifest.json", "report.html", "report.pdf")
    for name in members:
        (tmp_path / f"victim-{name}").write_bytes(b"not Veil's to write\n")
        (out / name).symlink_to(tmp_path / f"victim-{name}")
    before = snapshot(tmp_path)
    result = veil(
        "run",
        "--data",
        tmp_path / "in.csv",
        *ROLES,
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--model",
        "k-anonymity:k=2",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    written = changed(before, snapshot(tmp_path))
    assert sorted(written) == [Path("out") / n for n in sorted(members)]  # the four links, and nothing else
    assert all(stat.S_ISREG(os.lstat(out / n).st_mode) for n in members)  # each now a file of the export
    assert sorted(os.listdir(out)) == sorted(members)
    assert veil("verify", out).code == 0


def test_a_report_never_opens_an_input_that_became_a_fifo(tmp_path, veil, veil_process):
    (tmp_path / "in.csv").write_bytes(PEOPLE)
    out = tmp_path / "out"
    assert (
        veil(
            "run",
            "--data",
            tmp_path / "in.csv",
            *ROLES,
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--model",
            "k-anonymity:k=2",
            "--no-report",
            "--out",
            out,
        ).code
        == 0
    )
    (tmp_path / "in.csv").unlink()
    os.mkfifo(tmp_path / "in.csv")  # a reader would wait for a writer that never comes
    before = snapshot(tmp_path)
    result = veil_process("report", out, "--no-utility")  # a real process: its time limit catches a hang
    assert result.code == 0, result.err
    assert sorted(changed(before, snapshot(tmp_path))) == [Path("out/report.html"), Path("out/report.pdf")]
    assert "The input file is no longer a regular file" in (out / "report.html").read_text(encoding="utf-8")


# -- a real killed export: recovered in its own folder, refused anywhere else ------------------------------------------
class Killed(BaseException):
    """Stands for SIGKILL at a rename: nothing after it runs, and the kernel drops the lock."""


def test_a_killed_export_is_recovered_in_its_folder_and_its_journal_refused_elsewhere(tmp_path, veil, monkeypatch):
    from veil.engine.release import staging

    (tmp_path / "in.csv").write_bytes(PEOPLE)
    run = (
        "run",
        "--data",
        tmp_path / "in.csv",
        *ROLES,
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--model",
        "k-anonymity:k=2",
        "--no-report",
    )
    for folder in ("out", "copy"):
        assert veil(*run, "--out", tmp_path / folder).code == 0
    renames, real = [], staging._replace

    def killed_at_the_second(src, dst):
        renames.append(dst)
        if len(renames) == 2:
            raise Killed()
        real(src, dst)

    with monkeypatch.context() as m:
        m.setattr(staging, "_replace", killed_at_the_second)
        m.setattr(staging.Staging, "_rollback", lambda self, journal: None)
        m.setattr(staging.Staging, "discard", lambda self: self._release())
        with pytest.raises(Killed):
            veil(*run, "--seed", "1", "--out", tmp_path / "out")
    [left] = [p for p in (tmp_path / "out").iterdir() if p.name.startswith(staging.PREFIX)]
    assert veil("verify", tmp_path / "out").code == 1  # an incomplete export, named as such

    # the same journal, copied beside another export: not written there, so refused, and nothing touched
    shutil.copytree(left, tmp_path / "copy" / left.name, symlinks=True)
    before = snapshot(tmp_path)
    for argv in (("verify", tmp_path / "copy"), (*run, "--out", tmp_path / "copy")):
        result = veil(*argv)
        assert result.code == 2 and len(result.err_lines) == 1 and "another folder" in result.err, result.err
        assert snapshot(tmp_path) == before

    # in its own folder, the next export puts the earlier files back, then writes
    assert veil(*run, "--seed", "2", "--out", tmp_path / "out").code == 0
    assert sorted(os.listdir(tmp_path / "out")) == ["manifest.json", "release.csv"]
    assert veil("verify", tmp_path / "out").code == 0
    assert json.loads((tmp_path / "out/manifest.json").read_bytes())["seed"] == 2


# -- a manifest planted in the output folder never decides what an export removes --------------------------------------
THESIS = b"the user's thesis, in the export folder\n"


def _planted_manifest(release: dict, victims: dict, sign_with=None) -> bytes:
    """A real export's manifest listing ``victims`` (name -> content) as its files: unsigned, or signed
    with ``sign_with`` (a private key that is not this workstation's)."""
    import base64

    m = json.loads(release["manifest.json"])
    m["export"]["files"].update({n: hashlib.sha256(c).hexdigest() for n, c in victims.items()})
    m.pop("signature", None)
    m.pop("signed_by", None)
    if sign_with is not None:
        from cryptography.hazmat.primitives import serialization

        from veil.engine.release.signing import ALGORITHM, canonical, fingerprint

        raw = sign_with.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        m["signed_by"] = {
            "algorithm": ALGORITHM,
            "public_key": base64.b64encode(raw).decode(),
            "fingerprint": fingerprint(raw),
        }
        m["signature"] = base64.b64encode(sign_with.sign(canonical(m))).decode()
    return json.dumps(m).encode()


@pytest.mark.parametrize("how", ["unsigned", "signed by another key", "this workstation's, edited"])
def test_a_planted_manifest_never_makes_an_export_remove_a_file(tmp_path, veil, release_files, how):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    victims = {"thesis.docx": THESIS, "report.pdf": b"%PDF-1.4 the user's own report\n", "release.tsv": b"a\tb\n"}
    if how == "this workstation's, edited":  # a real signed manifest, then the victims added to its list
        m = json.loads(release_files["manifest.json"])
        m["export"]["files"].update({n: hashlib.sha256(c).hexdigest() for n, c in victims.items()})
        planted_manifest = json.dumps(m).encode()
    else:
        planted_manifest = _planted_manifest(
            release_files, victims, Ed25519PrivateKey.generate() if how != "unsigned" else None
        )
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_bytes(planted_manifest)
    for name, content in victims.items():
        (out / name).write_bytes(content)
    (tmp_path / "in.csv").write_bytes(PEOPLE)
    before = snapshot(tmp_path)
    result = veil(
        "run",
        "--data",
        tmp_path / "in.csv",
        *ROLES,
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--model",
        "k-anonymity:k=2",
        "--no-report",
        "--format",
        "csv",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    written = changed(before, snapshot(tmp_path))
    assert sorted(written) == [Path("out/manifest.json"), Path("out/release.csv")]  # only the export's own files
    assert all((out / n).read_bytes() == c for n, c in victims.items())


def test_an_export_made_here_is_replaced_whole(tmp_path, veil):
    """The files an earlier export made in this folder (its signed manifest lists them) give way to the
    next export's: a release of another format and a report it no longer writes."""
    (tmp_path / "in.csv").write_bytes(PEOPLE)
    run = (
        "run",
        "--data",
        tmp_path / "in.csv",
        *ROLES,
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--model",
        "k-anonymity:k=2",
        "--out",
        tmp_path / "out",
    )
    assert veil(*run, "--format", "tsv").code == 0
    assert sorted(os.listdir(tmp_path / "out")) == ["manifest.json", "release.tsv", "report.html", "report.pdf"]
    assert veil(*run, "--format", "csv", "--no-report").code == 0
    assert sorted(os.listdir(tmp_path / "out")) == ["manifest.json", "release.csv"]
    assert veil("verify", tmp_path / "out").code == 0


# -- the workstation's signing key -------------------------------------------------------------------------------------
def test_the_signing_key_is_made_on_first_export_readable_by_the_user_alone(tmp_path, veil, monkeypatch):
    settings = tmp_path / "settings"
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(settings))
    (tmp_path / "in.csv").write_bytes(PEOPLE)
    out = tmp_path / "out"
    assert not settings.exists()
    assert veil("verify", tmp_path / "nowhere").code == 2 and not settings.exists()  # only an export makes it
    assert (
        veil(
            "run",
            "--data",
            tmp_path / "in.csv",
            *ROLES,
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--model",
            "k-anonymity:k=2",
            "--out",
            out,
        ).code
        == 0
    )
    key = settings / "release-signing-key.pem"
    assert stat.S_IMODE(os.lstat(key).st_mode) == 0o600
    manifest = json.loads((out / "manifest.json").read_bytes())
    result = veil("verify", out)
    assert result.code == 0 and "signed by this workstation's key " + manifest["signed_by"]["fingerprint"] in result.out
    given = veil("verify", out, "--public-key", settings / "release-signing-key.pub")
    assert given.code == 0 and "signed by the given key" in given.out
    assert manifest["signed_by"]["fingerprint"] in (out / "report.html").read_text(encoding="utf-8")
    first = key.read_bytes()
    assert (
        veil(
            "run",
            "--data",
            tmp_path / "in.csv",
            *ROLES,
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--model",
            "k-anonymity:k=2",
            "--no-report",
            "--out",
            tmp_path / "again",
        ).code
        == 0
    )
    assert key.read_bytes() == first  # the same key, not a new one per export

    # another workstation (another settings folder) sees a key that is not its own
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(tmp_path / "elsewhere"))
    other = veil("verify", out)
    assert other.code == 0 and "which is not this workstation's" in other.out

    # a key others may read is refused, and nothing is written
    monkeypatch.setenv("VEIL_SETTINGS_DIR", str(settings))
    os.chmod(key, 0o644)
    before = snapshot(tmp_path)
    refused = veil(
        "run",
        "--data",
        tmp_path / "in.csv",
        *ROLES,
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--model",
        "k-anonymity:k=2",
        "--no-report",
        "--out",
        tmp_path / "third",
    )
    assert refused.code == 2 and len(refused.err_lines) == 1 and "chmod 600" in refused.err, refused.err
    assert snapshot(tmp_path) == before


# -- an input in the output folder is refused before the method runs ---------------------------------------------------
@pytest.mark.parametrize(
    "name", sorted(n for n in CASES if n.startswith("input in the output folder") and CASES[n].argv[0] == "run")
)
def test_an_input_in_the_output_folder_is_refused_before_the_method_runs(name, tmp_path, capsys, monkeypatch):
    from veil.engine.run import runs

    def never(*args, **kwargs):
        raise AssertionError("the method ran before the output folder was checked")

    monkeypatch.setattr(runs, "execute", never)
    c = CASES[name]
    write_case(tmp_path, c)
    before = snapshot(tmp_path)
    check(c, run_case(c, tmp_path, capsys), tmp_path, before)


# -- item-set files: what was read, said -------------------------------------------------------------------------------
READ_AS = {  # file -> (what inspect says it read, rows, features or columns)
    "eq.dat": (b"1 2 3\n4 5 6\n7 8 9\n2 5 8\n", "transactions: one item set per line, each listing", 4, "features  9"),
    "ragged-repeat.dat": (b"1 2 2\n4 5\n7 8 9\n", "line 1 repeats an item: it counts once", 3, "features  7"),
    "unsorted.spmf": (b"3 1 2\n6 4 5\n9 7 8\n", "transactions: one item set per line (an SPMF file)", 3, "features  9"),
    "unsorted.dat": (
        b"3 1 2\n6 4 5\n9 7 8\n",
        "a table of 3 columns: its lines have one length and some line lists",
        3,
        "columns  3",
    ),
    "negative.dat": (b"1 -2 3\n4 5 6\n", "a table of 3 columns: line 1 holds '-2', a negative number", 2, "columns  3"),
    "quoted.dat": (
        b'1 2 "3"\n4 5 6\n7 8 9\n',
        "a table of 3 columns: line 1 holds '\"3\"', a quoted field",
        3,
        "columns  3",
    ),
}


@pytest.mark.parametrize("name", sorted(READ_AS))
def test_an_item_set_file_says_how_it_was_read(name, tmp_path, veil):
    content, said, rows, shape = READ_AS[name]
    (tmp_path / name).write_bytes(content)
    before = snapshot(tmp_path)
    result = veil("inspect", tmp_path / name)
    assert result.code == 0, result.err
    assert said in result.out and "rows" in result.out and shape.split()[0] in result.out, result.out
    facts = {line.split()[0]: line.split()[-1] for line in result.out.splitlines() if line.strip()}
    assert facts["rows"] == str(rows) and facts[shape.split()[0]] == shape.split()[-1], result.out
    assert snapshot(tmp_path) == before


def test_equal_lines_of_increasing_ids_are_released_as_item_sets(tmp_path, veil):
    """PatternKa on a file of equal-length lines of ids publishes item sets of those ids, never col=value."""
    lines = [sorted({(i * 7 + j * 3) % 12 for j in range(3)}) for i in range(24)]
    lines = [ln for ln in lines if len(ln) == 3]
    (tmp_path / "in.dat").write_bytes("".join(" ".join(map(str, ln)) + "\n" for ln in lines).encode())
    before = sha256(tmp_path / "in.dat")
    result = veil(
        "run",
        "--method",
        "patternka",
        "--model",
        "set-k-anonymity:k=2",
        "--data",
        tmp_path / "in.dat",
        "--out",
        tmp_path / "out",
    )
    assert result.code == 0, result.err
    released = (tmp_path / "out" / "release.dat").read_text()
    assert "=" not in released and "col" not in released
    assert sha256(tmp_path / "in.dat") == before


# -- a generalised release whose values need formula escaping, in every format -----------------------------------------
FORMULAS = (
    b"age,zip,disease\n-5,=1+1,flu\n-5,=1+1,cold\n-5,@x,flu\n-5,@x,cold\n10,-2,flu\n12,-2,cold\n-7,+3,flu\n-7,+3,cold\n"
)


@pytest.mark.parametrize("fmt", ["xlsx", "csv", "tsv", "parquet"])
def test_mondrian_values_needing_escapes_export_in_every_format(fmt, tmp_path, veil):
    """Generalised (categorical) cells that start with = @ + or - (a negative number kept exact): written
    escaped, read back as they were, verified; no formula cell in the workbook."""
    (tmp_path / "in.csv").write_bytes(FORMULAS)
    before = snapshot(tmp_path)
    out = tmp_path / "out"
    result = veil(
        "run",
        "--data",
        tmp_path / "in.csv",
        "--quasi",
        "age,zip",
        "--sensitive",
        "disease",
        "--method",
        "mondrian",
        "--model",
        "k-anonymity:k=2",
        "--release-sensitive",
        "disease",
        "--format",
        fmt,
        "--no-report",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    assert sorted(changed(before, snapshot(tmp_path))) == [
        Path("out"),
        Path("out/manifest.json"),
        Path(f"out/release.{fmt}"),
    ]
    assert veil("verify", out).code == 0
    if fmt == "xlsx":
        import openpyxl

        cells = [c for row in openpyxl.load_workbook(out / "release.xlsx").active.iter_rows() for c in row]
        assert not [c.value for c in cells if c.data_type == "f"]
        assert "'-5" in {c.value for c in cells} and "'=1+1" in {c.value for c in cells}


# -- names holding terminal escapes are shown, never obeyed ------------------------------------------------------------
ESC_NAME, BEL_NAME = "na\x1b[31mme\x1b]0;owned\x07", "age\x07"
ESCAPES = ("\x1b", "\x07", "\x9b")


def _escaped_table() -> bytes:
    return (f"{ESC_NAME},{BEL_NAME},sex,outcome\nA,1,F,0\nB,1,F,1\nC,2,M,0\nD,2,M,1\n").encode()


@pytest.mark.parametrize(
    "argv",
    [
        ("inspect", "{d}/in.csv"),
        (
            "run",
            "--data",
            "{d}/in.csv",
            "--sensitive",
            ESC_NAME,
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            "{d}/out",
        ),
        (
            "run",
            "--data",
            "{d}/in.csv",
            "--quasi",
            BEL_NAME,
            "--model",
            "k-anonymity:k=3",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            "{d}/out",
        ),
        (
            "run",
            "--data",
            "{d}/in.csv",
            "--identifier",
            "sex",
            "--sensitive",
            ESC_NAME,
            "--release-sensitive",
            ESC_NAME,
            "--quasi",
            BEL_NAME,
            "--target",
            "outcome",
            "--method",
            "all-features",
            "--metrics",
            "sfc",
            "--no-report",
            "--out",
            "{d}/out",
        ),
        ("run", "--data", "{d}/in.csv", "--quasi", f"{BEL_NAME},nope", "--method", "all-features", "--out", "{d}/out"),
    ],
    ids=["inspect", "refused sensitive", "failed model", "released with notes", "unknown column"],
)
def test_escape_sequences_in_names_never_reach_the_terminal(argv, tmp_path, capsys):
    (tmp_path / "in.csv").write_bytes(_escaped_table())
    result = run_case(Case({}, argv), tmp_path, capsys)
    assert result.code in (0, 1, 2)
    text = result.out + result.err
    assert text and not any(e in text for e in ESCAPES), repr(text)
    assert "Traceback" not in text
    if result.code == 0 and argv[0] == "inspect":
        assert "na\\x1b[31mme" in result.out


def test_spmf_item_lines_hold_no_control_character(tmp_path, veil):
    """``@ITEM`` lines name column and value with printable escapes (no \\x1f separator), and read back."""
    (tmp_path / "in.csv").write_bytes(b'a,b,c\n"x=1\ny",0,1\n"x=1\ny",1,1\nz\\w,0,0\nz\\w,1,0\n')
    out = tmp_path / "out"
    result = veil(
        "run",
        "--data",
        tmp_path / "in.csv",
        "--method",
        "all-features",
        "--metrics",
        "sfc",
        "--format",
        "spmf",
        "--no-report",
        "--out",
        out,
    )
    assert result.code == 0, result.err
    text = (out / "release.txt").read_text(encoding="utf-8")
    assert not [c for c in text if not c.isprintable() and c != "\n"], repr(text)
    assert "@ITEM=1=a=x\\=1\\u000ay" in text
    assert veil("verify", out).code == 0


def test_xlsx_dates_as_a_quasi_identifier_without_a_hierarchy(tmp_path, veil):
    """Date cells of a workbook generalise day → month → year (they were "not in its hierarchy")."""
    import datetime as dt

    rows = [["when", "sex"]] + [[dt.datetime(2020, 1 + i % 3, 1 + i % 2), "FM"[i % 2]] for i in range(12)]
    (tmp_path / "in.xlsx").write_bytes(_workbook(rows))
    for method in ("mondrian", "global-recoding"):
        out = tmp_path / method
        result = veil(
            "run",
            "--data",
            tmp_path / "in.xlsx",
            "--quasi",
            "when,sex",
            "--method",
            method,
            "--model",
            "k-anonymity:k=2",
            "--no-report",
            "--out",
            out,
        )
        assert result.code == 0, result.err
        assert veil("verify", out).code == 0


def test_a_full_disk_names_the_output_folder(tmp_path, capsys, monkeypatch):
    import errno

    from veil.engine.release import staging

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(staging, "_fsync_file", full)
    (tmp_path / "in.csv").write_bytes(PEOPLE)
    before = snapshot(tmp_path)
    result = run_case(Case({}, (*FILE_RUN, *ROLES)), tmp_path, capsys)
    assert result.code == 2 and len(result.err.splitlines()) == 1, result.err
    assert f"the output folder {tmp_path}/out" in result.err and "No space left on device" in result.err
    assert snapshot(tmp_path) == before
