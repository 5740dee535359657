"""Heuristic searches of global recoding's lattice, for lattices too large to search whole
(docs/anonymisation.md#heuristic-search, docs/reference.md#heuristic-search). Registers nothing.

Both walk the same lattice as the optimal search (:mod:`._lattice`), evaluate a node the same way
(its class table rolled up from a specialisation, judged, measured with suppression) and keep the
best solution by the same order (:func:`._lattice.better`). They differ in which nodes they visit
and in stopping when a *budget* is spent: a number of transformations checked, or seconds.

* :func:`best_first` follows Lightning (Prasser, Bild and Kuhn, “Lightning: Utility-Driven
  Anonymization of High-Dimensional Data”, Transactions on Data Privacy 9(2), 2016): from the
  bottom, the checked node of least loss is expanded next (each of its direct generalisations
  checked and queued), and every ``stepping``-th expansion (``stepping`` the height of the lattice)
  instead climbs greedily, always to the least lossy direct generalisation, up to the top. The
  first expansion climbs (ARX's the ``stepping``-th), so that a solution is known, and bounds prune,
  from the start even on a small budget. A node whose lower bound cannot beat the best solution is
  neither checked nor expanded. When the queue empties before the budget, every node was either
  checked or bounded out, and the result is the optimum.
* :func:`genetic` follows Wan et al.'s genetic algorithm as ARX implements it (two subpopulations,
  an elite kept, children by uniform crossover of parents drawn by fitness, the rest mutants, the
  fittest exchanged between the subpopulations every few generations). Its random choices come
  from the run's seed.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from veil.engine import NodeStatus, SolutionSpace

from ._lattice import MAX_NODES, Kept, Outcome, better, evaluate, key, lattice_size, rollup, same

SEARCHES = ("auto", "optimal", "heuristic", "genetic")
# search=auto: the optimal search up to MAX_NODES transformations, the genetic one beyond (automatic)
GENETIC_ABOVE = MAX_NODES


class Spent(Exception):
    """The budget is spent: the search returns the best solution found so far."""


class Walker:
    """Nodes evaluated on demand within a budget: their outcomes in the order checked (the search's
    path), the best solution so far, class tables rolled up from the smallest kept specialisation."""

    def __init__(self, attrs, base, judge, objective, ctx, checks: int, seconds: float):
        self.attrs, self.judge, self.objective, self.ctx = attrs, judge, objective, ctx
        self.top = tuple(a.height for a in attrs)
        self.size = lattice_size(attrs)
        self.kept = Kept(base)
        self.known: dict[tuple, Outcome] = {}
        self.best: Outcome | None = None
        self.checks = int(checks) if checks > 0 else math.inf
        self.seconds = float(seconds)
        self.deadline = time.monotonic() + seconds if seconds > 0 else math.inf

    @property
    def exhausted(self) -> bool:
        return len(self.known) >= min(self.checks, self.size) or time.monotonic() >= self.deadline

    def bound(self, levels: tuple) -> float:
        """The metric's lower bound at ``levels`` and every generalisation of it, from the hierarchies alone."""
        return float(self.objective.bounds(np.asarray([levels], dtype=np.int64))[0])

    def can_beat(self, lower: float, levels: tuple) -> bool:
        """Whether a node of bound ``lower``, or a generalisation of it, may beat the best solution."""
        if self.best is None:
            return True
        if same(lower, self.best.value):
            return sum(levels) <= sum(self.best.levels)  # only a tie, which a lower node wins
        return lower < self.best.value

    def node(self, levels: tuple) -> Outcome:
        """The node's outcome, checked now if it was not before; :class:`Spent` when the budget is."""
        if levels in self.known:
            return self.known[levels]
        if self.exhausted:
            raise Spent
        k = self.kept
        below = np.flatnonzero((k.levels[: k.count] <= np.asarray(levels, dtype=np.int16)[None, :]).all(axis=1))
        source = k.tables[below[np.argmin(k.sizes[below])]]
        self.ctx.check()
        table = rollup(source, levels, self.attrs)
        k.add(table)
        stars = [a.star[l] for a, l in zip(self.attrs, levels)]
        out = evaluate(table, self.judge, self.objective, self.bound(levels), stars)
        self.known[levels] = out
        if out.solution and (self.best is None or better(out, self.best)):
            self.best = out
        checked = len(self.known)
        if checked % 16 == 0:
            share = checked / min(self.checks, self.size) if self.checks < math.inf else 0.0
            if self.deadline < math.inf:
                share = max(share, 1.0 - max(self.deadline - time.monotonic(), 0.0) / self.seconds)
            best = "no solution yet" if self.best is None else f"best {self.best.value:.4g}"
            self.ctx.progress(min(share, 1.0), f"global recoding: {checked:,} transformations checked, {best}")
        return out

    def successors(self, levels: tuple) -> list[tuple]:
        return [levels[:j] + (levels[j] + 1,) + levels[j + 1 :] for j in range(len(levels)) if levels[j] < self.top[j]]


def fitness(out: Outcome) -> tuple:
    """The order the heuristics rank checked nodes by: solutions first by their loss, then the others
    by the loss they would have with nothing suppressed (their lower bound); then the lower node."""
    return (0, out.value, key(out.levels)) if out.solution else (1, out.lower, key(out.levels))


def best_first(walker: Walker) -> bool:
    """Lightning's best-first search (module docstring). True when it ended before the budget, every
    node checked or bounded out: the best solution found is then the optimum."""
    bottom = tuple(0 for _ in walker.top)
    stepping = max(sum(walker.top), 1)
    queue: list = []
    queued: set = set()
    expanded: set = set()

    def push(out: Outcome) -> None:
        if out.levels not in queued:
            queued.add(out.levels)
            heapq.heappush(queue, (_priority(out), key(out.levels), out.levels))

    def expand(levels: tuple) -> Outcome | None:
        """Check and queue the node's direct generalisations; the least lossy of them."""
        chosen = None
        for succ in walker.successors(levels):
            if succ in expanded or not walker.can_beat(walker.bound(succ), succ):
                continue
            out = walker.node(succ)
            push(out)
            if chosen is None or (_priority(out), key(out.levels)) < (_priority(chosen), key(chosen.levels)):
                chosen = out
        expanded.add(levels)
        return chosen

    try:
        push(walker.node(bottom))
        step = 0
        while queue:
            levels = heapq.heappop(queue)[2]
            out = walker.known[levels]
            if levels in expanded or not (walker.best is out or walker.can_beat(out.lower, levels)):
                continue
            step += 1
            if step % stepping != 1 and stepping > 1:
                expand(levels)
                continue
            nxt = expand(levels)  # a greedy climb to the top
            while nxt is not None and nxt.levels not in expanded:
                nxt = expand(nxt.levels)
    except Spent:
        return False
    return True


def _priority(out: Outcome) -> float:
    return out.value if out.solution else out.lower


# ARX's defaults (ARXConfiguration): subpopulations of d + 100, 20 % elite, 20 % crossover, parents drawn
# from the fittest 20 %, up to ceil(20 % of d) levels mutated, the fittest 20 % exchanged every 10 generations
SUBPOPULATION, ELITE, CROSSOVER, PRODUCTION, MUTATION, IMMIGRATION, INTERVAL = 100, 0.2, 0.2, 0.2, 0.2, 0.2, 10


def genetic(walker: Walker, rng: np.random.Generator, generations: int) -> bool:
    """The genetic search (module docstring) for ``generations`` generations or until the budget is
    spent. True when it checked every node of the lattice (the best is then the optimum)."""
    top = np.asarray(walker.top, dtype=np.int64)
    d = len(top)
    k = d + SUBPOPULATION

    def individual(levels) -> Outcome:
        return walker.node(tuple(int(x) for x in levels))

    def random_levels() -> np.ndarray:
        return np.rint(rng.random(d) * top).astype(np.int64)

    try:
        # the first subpopulation starts with a "triangle" (columns 0 … i at the top, the rest at 0)
        # covering the lattice's corners, both are filled up with random individuals
        first = [individual(np.where(np.arange(d) <= i, top, 0)) for i in range(min(d, k))]
        first += [individual(random_levels()) for _ in range(k - len(first))]
        second = [individual(random_levels()) for _ in range(k)]
        moving = int(IMMIGRATION * k)
        for generation in range(generations):
            first.sort(key=fitness)
            second.sort(key=fitness)
            if generation % INTERVAL == 0 and moving:
                first, second = first[moving:] + second[:moving], second[moving:] + first[:moving]
                first.sort(key=fitness)
                second.sort(key=fitness)
            _generation(first, rng, top, individual)
            _generation(second, rng, top, individual)
    except Spent:
        return len(walker.known) >= walker.size
    return len(walker.known) >= walker.size


def _generation(population: list, rng: np.random.Generator, top: np.ndarray, individual) -> None:
    """One generation in place (``population`` sorted fittest first): the elite kept, the last places
    taken by children of two parents drawn by fitness, the places between by mutants of random members."""
    k, d = len(population), len(top)
    crossover, elite, production = (math.ceil(f * k) for f in (CROSSOVER, ELITE, PRODUCTION))
    old = list(population)
    weights = np.arange(production, 0, -1, dtype=float)  # by rank: the fittest most likely
    weights /= weights.sum()
    first = rng.choice(production, size=crossover, p=weights)
    second = rng.choice(production, size=crossover, p=weights)
    for i in range(crossover):
        take = rng.random(d) < 0.5
        child = np.where(take, old[first[i]].levels, old[second[i]].levels)
        population[k - i - 1] = individual(child)
    most = math.ceil(MUTATION * d)
    for place in range(elite, k - crossover):
        levels = np.asarray(old[int(rng.integers(k))].levels, dtype=np.int64)
        where = rng.permutation(d)[: int(rng.integers(most + 1))]
        levels[where] = np.rint(rng.random(len(where)) * top[where]).astype(np.int64)
        population[place] = individual(levels)


def automatic(size: int) -> str:
    """The search ``search=auto`` runs on a lattice of ``size`` transformations: the optimal one while
    it holds the lattice (at most MAX_NODES), the genetic one beyond (GENETIC_ABOVE), the best-first
    one between the two (nowhere, as the thresholds stand). The best-first search matched the
    optimum on lattices the optimal search holds, but on every wider one measured (10 to 20 columns,
    4·10⁶ to 1.3·10¹² transformations) the genetic search found 2–14 % less loss at the same budget
    in less time (docs/benchmarks.md#heuristic-search-on-20-quasi-identifiers)."""
    if size <= MAX_NODES:
        return "optimal"
    return "genetic" if size > GENETIC_ABOVE else "heuristic"


def run(kind: str, attrs, base, judge, objective, ctx, params) -> tuple:
    """Run the heuristic search ``kind`` ("heuristic" or "genetic") within the budget ``params`` sets:
    (the best solution found or None, the walker, whether the best is proven optimal)."""
    walker = Walker(attrs, base, judge, objective, ctx, params.budget, params.seconds)
    if kind == "genetic":
        proven = genetic(walker, np.random.default_rng(ctx.seed), params.generations)
    else:
        proven = best_first(walker)
    return walker.best, walker, proven


def heuristic_space(walker: Walker, metric: str, optimum: tuple, limit: int) -> SolutionSpace:
    """The nodes the heuristic checked, in the order it checked them (its path), as a solution space;
    levels are the hierarchies' own (a column's window of allowed levels shifted back), ``optimum`` too."""
    attrs, known = walker.attrs, list(walker.known.values())
    offsets = np.array([a.offset for a in attrs], dtype=np.int16)
    levels = np.array([o.levels for o in known], dtype=np.int16).reshape(-1, len(attrs)) + offsets[None, :]
    status = np.array([NodeStatus.SOLUTION if o.solution else NodeStatus.NOT_SOLUTION for o in known], dtype=np.int8)
    loss = np.array([o.value if o.solution else np.nan for o in known], dtype=float)
    also = np.array([o.also if o.solution else np.nan for o in known], dtype=float)
    suppressed = np.array([o.suppressed if o.condition else -1 for o in known], dtype=np.int64)
    companion = walker.objective.companion
    return SolutionSpace(
        tuple(a.name for a in attrs),
        tuple(a.full_height for a in attrs),
        metric,
        levels,
        status,
        loss,
        suppressed,
        tuple(int(x) for x in optimum),
        complete=len(known) == walker.size,
        lattice_nodes=int(walker.size),
        limit=int(limit),
        lowest=tuple(a.offset for a in attrs),
        highest=tuple(a.offset + a.height for a in attrs),
        weights=tuple(float(w) for w in walker.objective.w),
        also_metric=companion.metric if companion is not None else "",
        also=also if companion is not None else None,
    )
