"""The classifier figures are remembered across processes in the user's cache,
keyed by everything they depend on. A later process (here: the in-process memo cleared) reads the
same figures back without fitting; other data, another seed, other folds, another C grid or other
code is computed afresh and equals the computation without any cache; a corrupt, foreign or
out-of-range entry is ignored; an unwritable cache only means computing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from veil.engine import Context, cache_key, load_cached, store_cached
from veil.engine.base import usercache
from veil.plugins.evaluation import metrics as bm


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("VEIL_CACHE_DIR", str(folder))
    bm._CV_MEMO.clear()
    yield folder
    bm._CV_MEMO.clear()


def data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.integers(0, 2, (n, 4)).astype(float), rng.random((n, 1))])
    y = np.where(X[:, 0] + X[:, 4] + 0.5 * rng.random(n) > 1.2, "yes", "no")
    return X, y


FOLDS = 2  # the fewest: the cache, not the protocol, is under test (test_utility_cv.py tests that)


def entries(folder):
    return sorted(folder.rglob("*.json"))


def uncached(monkeypatch, X, y, folds, seed):
    """The figures with no cache at all (the reference)."""
    with monkeypatch.context() as m:
        m.setenv("VEIL_CACHE_DIR", "")
        bm._CV_MEMO.clear()
        out = bm.cv_scores(X, y, folds, Context(seed))
        bm._CV_MEMO.clear()
    return out


def no_fitting(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("fitted although the figures were cached")

    monkeypatch.setattr(bm, "_fold_scores", refuse)


def test_a_later_process_reads_the_figures_back_without_fitting(cache, monkeypatch):
    X, y = data()
    first = bm.cv_scores(X, y, FOLDS, Context(1))
    assert len(entries(cache)) == 1
    bm._CV_MEMO.clear()  # as a new process starts
    with monkeypatch.context() as m:
        no_fitting(m)
        perm = np.random.default_rng(9).permutation(len(y))
        assert bm.cv_scores(X[perm], y[perm], FOLDS, Context(1)) == first  # by content, not row order
    assert first == uncached(monkeypatch, X, y, FOLDS, 1)


@pytest.mark.parametrize("change", ["one label", "one value", "seed", "folds", "C grid", "code"])
def test_anything_the_figures_depend_on_is_computed_afresh(cache, monkeypatch, change):
    X, y = data()
    bm.cv_scores(X, y, FOLDS, Context(1))
    bm._CV_MEMO.clear()
    seed, folds = 1, FOLDS
    X2, y2 = X.copy(), y.copy()
    if change == "one label":
        y2[7] = "no" if y2[7] == "yes" else "yes"
    elif change == "one value":
        X2[3, 4] += 0.25
    elif change == "seed":
        seed = 2
    elif change == "folds":
        folds = FOLDS + 1
    elif change == "C grid":
        monkeypatch.setattr(bm, "C_GRID", (0.1, 1.0, 10.0))
    else:
        monkeypatch.setattr(bm, "_CODE_VERSION", ("another version of the code",))
    calls = []
    real = bm._fold_scores
    monkeypatch.setattr(bm, "_fold_scores", lambda *a: calls.append(1) or real(*a))
    bm.cv_scores(X2, y2, folds, Context(seed))
    assert calls, "the stored figures of other data or settings were returned"  # fitted: the figures are fresh
    assert len(entries(cache)) == 2


@pytest.mark.parametrize(
    "damage", ["garbage", "truncated", "other key", "out of range", "missing score", "not a number", "old format"]
)
def test_a_damaged_or_foreign_entry_is_ignored(cache, monkeypatch, damage):
    X, y = data(3)
    first = bm.cv_scores(X, y, FOLDS, Context(0))
    (path,) = entries(cache)
    entry = json.loads(path.read_text())
    if damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        path.write_text(path.read_text()[:-9])
    elif damage == "other key":  # another data set's entry, renamed to this key
        entry["key"] = "0" * 64
        path.write_text(json.dumps(entry))
    elif damage == "out of range":
        entry["value"]["auc"] = 1.5
        path.write_text(json.dumps(entry))
    elif damage == "missing score":
        del entry["value"]["accuracy"]
        path.write_text(json.dumps(entry))
    elif damage == "not a number":
        entry["value"]["auc"] = "high"
        path.write_text(json.dumps(entry))
    else:
        entry["format"] = usercache.FORMAT + 1
        path.write_text(json.dumps(entry))
    bm._CV_MEMO.clear()
    calls = []
    real = bm._fold_scores
    monkeypatch.setattr(bm, "_fold_scores", lambda *a: calls.append(1) or real(*a))
    assert bm.cv_scores(X, y, FOLDS, Context(0)) == first
    assert calls  # computed again, not read
    assert json.loads(path.read_text())["value"] == first  # and the entry is whole again


def test_a_cache_that_cannot_be_written_only_means_computing(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("VEIL_CACHE_DIR", str(blocker / "cache"))
    bm._CV_MEMO.clear()
    X, y = data(4)
    assert bm.cv_scores(X, y, FOLDS, Context(0)) == uncached(monkeypatch, X, y, FOLDS, 0)
    monkeypatch.setenv("VEIL_CACHE_DIR", "off")
    assert usercache.cache_dir() is None and not store_cached("linearsvc-cv", "ab" * 32, {"auc": 0.5})


def test_store_and_load_round_trip_and_keys_differ_by_every_part(tmp_path, monkeypatch):
    monkeypatch.setenv("VEIL_CACHE_DIR", str(tmp_path))
    key = cache_key("a", 1, b"\x00")
    assert (
        len(
            {
                key,
                cache_key("a", 1, b"\x01"),
                cache_key("a", 2, b"\x00"),
                cache_key("a1", b"\x00"),
                cache_key("a", "1", b"\x00"),
            }
        )
        == 5
    )
    assert load_cached("ns", key) is None
    assert store_cached("ns", key, {"x": [1, 2.5, None]})
    assert load_cached("ns", key) == {"x": [1, 2.5, None]}
    assert load_cached("other-ns", key) is None
    assert load_cached("ns", "../" + key) is None  # never a path outside the cache
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary file left behind


def test_the_least_recently_used_entries_are_pruned(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("VEIL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(usercache, "MAX_ENTRIES", 10)
    keys = [cache_key("entry", i) for i in range(10)]
    for i, key in enumerate(keys):
        assert store_cached("ns", key, i)
        path = next(tmp_path.rglob(f"{key}.json"))
        os.utime(path, (1000 + i, 1000 + i))  # stored in this order
    assert load_cached("ns", keys[0]) == 0  # used again: now the most recent
    assert store_cached("ns", cache_key("entry", 10), 10)  # the 11th: down to 8, the oldest unused go
    left = {k for k in keys if load_cached("ns", k) is not None}
    assert len(left) == 7 and keys[0] in left and not {keys[1], keys[2], keys[3]} & left
    assert load_cached("ns", cache_key("entry", 10)) == 10
