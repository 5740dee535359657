"""Top-down partitioning of set-valued records without an item hierarchy, the set-valued baseline of
paper 002 (docs/reference.md#set-valued-data; after He and Naughton 2009, local generalisation, here with no
hierarchy so an item is either kept in a group's centre or suppressed).

Start with every record in one partition. A partition P is split on an item i into the records
holding i and the rest; a split is allowed when both parts keep at least k records. Of the allowed
splits the one that lowers the loss most is made (ties: the smallest item), where a partition's
loss is the number of items its records lose when each is published as the partition's centre
(the items all its records hold): loss(P) = Σ_{t∈P} |t| − |P|·|C_P|. Every allowed split lowers
the loss (the part holding i gains i in its centre), so a partition is final exactly when no item
splits it into two parts of at least k. The release publishes each record as its partition's
centre, as PatternKa's does; GCP = total loss / total items.

Every candidate split of a partition is scored at once from the partition's item co-occurrence
counts M = XᵀX (sparse): the part holding i has centre {j : M_ij = s_i} and the other part
{j : s_j − M_ij = |P| − s_i} (s: item supports in P). A split costs O(Σ_{t∈P} |t|²), not
O(items × |P|) set intersections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from veil.engine import SETS, Algorithm, BadInput, Judgement, SetValued, hookimpl

from ._grouping import Grouping, grouped_sets_release, information_loss

if TYPE_CHECKING:  # scipy.sparse is loaded where a matrix is built, not to register the plugins
    import scipy.sparse as sp

PAPER = "002_aa8a8f08b56f3f6d"


def best_split(x: sp.csr_matrix, k: int):
    """(item, gain) of the best allowed split of the records ``x`` (boolean CSR), or None."""
    size = x.shape[0]
    s = np.asarray(x.sum(axis=0, dtype=np.int64)).ravel()
    cand = np.flatnonzero((s >= k) & (s <= size - k))
    if len(cand) == 0:
        return None
    xi = x.astype(np.int32)
    m = (xi[:, cand].T @ xi).tocsr()  # candidates × items co-occurrence
    m.sum_duplicates()
    rows = np.repeat(np.arange(len(cand)), np.diff(m.indptr))
    si = s[cand]
    rest = size - si
    centre_a = np.bincount(rows[m.data == si[rows]], minlength=len(cand))
    # the other part's centre: items j with s_j − M_ij = |P| − s_i, among j co-occurring with i
    # and among j never co-occurring with i (M_ij = 0: s_j = |P| − s_i)
    hist = np.bincount(s, minlength=size + 1)
    co_b = np.bincount(rows[s[m.indices] - m.data == rest[rows]], minlength=len(cand))
    co_zero_b = np.bincount(rows[s[m.indices] == rest[rows]], minlength=len(cand))
    centre_b = co_b + hist[rest] - co_zero_b
    centre_p = int(hist[size])
    gain = si * centre_a + rest * centre_b - size * centre_p
    best = int(np.argmax(gain))  # ties: the smallest item
    return int(cand[best]), int(gain[best])


def top_down_groups(sets: SetValued, k: int, check=None, progress=None) -> Grouping:
    """Partition ``sets`` top-down; groups are numbered in the order partitions became final."""
    import scipy.sparse as sp

    n = sets.n_rows
    if k < 1:
        raise BadInput("k must be at least 1")
    if k > n:
        raise BadInput(f"k = {k} is larger than the number of records ({n})")
    csr = sp.csr_matrix((np.ones(sets.nnz, dtype=bool), sets.indices, sets.indptr), shape=(n, sets.n_items))
    groups = np.full(n, -1, dtype=np.int64)
    centres_rows, centres_cols, patterns = [], [], []
    stack = [(np.arange(n), ())]
    done = 0
    while stack:
        if check is not None:
            check()
        rows, path = stack.pop()
        x = csr[rows]
        split = best_split(x, k) if len(rows) >= 2 * k else None
        if split is None:
            gid = len(patterns)
            groups[rows] = gid
            counts = np.asarray(x.sum(axis=0, dtype=np.int64)).ravel()
            held = np.flatnonzero(counts == len(rows))
            centres_rows.append(np.full(len(held), gid))
            centres_cols.append(held)
            patterns.append(path)
            done += len(rows)
            if progress is not None:
                progress(done / n, f"top-down: {gid + 1} groups, {n - done} records left")
            continue
        item = split[0]
        has = np.asarray(x[:, item].todense()).ravel()
        stack.append((rows[~has], path))
        stack.append((rows[has], path + (item,)))
    g = len(patterns)
    r = np.concatenate(centres_rows) if centres_rows else np.zeros(0, np.int64)
    c = np.concatenate(centres_cols) if centres_cols else np.zeros(0, np.int64)
    centre = sp.csr_matrix((np.ones(len(r), dtype=bool), (r, c)), shape=(g, sets.n_items))
    centre.sort_indices()
    centres = SetValued(centre.indptr, centre.indices, sets.item_names, meta={"source": sets.meta.get("source")})
    return Grouping(groups, centres, patterns, 0)


class TopDown(Algorithm):
    name = "top-down"
    title = "Top-down partitioning (set-valued)"
    paper = PAPER
    description = (
        "Splits the records again and again on the item whose split keeps both parts at k or more "
        "records and suppresses the fewest items; each record is published as its group's centre "
        "(the items every member holds). No item hierarchy is used."
    )
    accepts = (SETS,)
    needs_model = True
    satisfies = (Judgement.GROUP_SIZE,)  # groups of at least k records
    provides = ("set-groups",)
    Params = None

    def run(self, data, model, params, ctx):
        grouping = top_down_groups(data, model.params.k, check=ctx.check, progress=ctx.progress)
        loss = information_loss(data, grouping.groups, grouping.centres)
        details = {"groups": grouping.n_groups, "gcp": loss}
        notes = ["every item is a quasi-identifier; each record is published as its group's centre"]
        if data.labels is not None:
            notes.append("the target of set-valued records is not released")
        return grouped_sets_release(data, grouping, details=details, notes=notes)


@hookimpl
def veil_register_algorithms():
    return [TopDown]
