"""Branch bandit: the choice that a conditional space branches on (a model family, say) as the
arms of a max-armed bandit, so that a branch seen only at poor settings is looked at again.

In a conditional space the forest's mean in a branch that has seen two poor points is their
average, its spread small, and a run can refine another branch for the rest of its budget
although the poor points were poor for a reason the branch does not share (a preprocessing
that dropped the informative features, a regularisation far too strong).  Balef, Vernade
and Eggensperger (2025, "Put CASH on Bandits: a max K-armed problem for automated machine
learning") choose the model family of each evaluation by MaxUCB: with the losses min-max
scaled to rewards in [0.01, 0.99], arm ``k``'s index is its best reward plus
``(alpha * ln t / n_k) ** 2`` (``t``: evaluations so far, ``n_k``: arm ``k``'s), a bonus made
for the short-tailed rewards of tuning.  A :class:`BranchBandit` computes that index before
every proposal after the initial design; when its largest is not the incumbent's arm it
proposes a point of that arm, otherwise it passes to the next step (the forest's own
proposal).  It passes in a space whose categorical parameters are no condition's parents
(unless ``flat``, below).

Choices can nest: a kernel under the model family "svm", a leaf under a subtree.  With
``nested`` the bandit goes on down the tree of choices, MaxUCB at each choice among the
observations that made every choice above it (:func:`branch_path`), and proposes when any of
those choices differs from the incumbent's, so that a run refining one leaf of a deep tree
looks at its siblings as well as at the other subtrees.

A space without conditions has no branching parameter, but its categorical parameters (a loss,
a penalty, a learning-rate schedule) trap a run the same way: with ``flat`` the bandit's arms
are the values of each categorical parameter, one MaxUCB per parameter from all observations
(:func:`flat_path`).

In MaxUCB an arm's pull is a step of that arm's own optimiser; a pull here is one point of the
arm.  Two options make it more of a step: ``per_parameter="earned"`` draws the arm's own
parameters near its best values once that best is below a quantile of the losses, the median
by default (from the prior before, so that an arm seen only at poor settings is explored, not
narrowed on them), and
``burst`` follows a pull with the acquisition's best points of the arm it pulled, so that the
arm is refined before MaxUCB judges it again.

Whether a pull should go near the arm's best depends on the arm: the best of a few points of a
leaf with one parameter of its own says where its minimum is, that of a model family with four
says little.  So ``per_parameter="leaf"`` draws near the arm's best only an arm with at most
``leaf_size`` parameters of its own (:func:`own_parameters`), and ``nested="leaf"`` goes on
down only under an arm with at most ``leaf_size`` when the choice nested under it counts as
one and the parameters under that choice do not: the tree's inner splits (a shared real and
the split), not an SVM's kernel (beside C and epsilon).

With ``patience`` the bandit waits for a stall, but once a run stalls every later proposal is
the bandit's whenever its arm is not the incumbent's, and a stall is long where losses tie (an
accuracy on a few hundred samples): most of a run's budget then goes to pulls, one point of an
arm each, while the forest's own proposals, which find most improvements, get the rest.
``cooldown`` keeps a share for them: the bandit is asked only when none of the last
``cooldown`` observations was its own pull.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from acquisitions import level_index

from ..._core.arguments import check_int
from .base import Context, Point, Step
from .branch import first_allowed_new, random_draws
from .stall import failures_in_a_row

__all__ = [
    "BranchBandit", "branch_dimension", "branch_path", "flat_path", "max_ucb",
    "nested_dimension", "path_of", "arm_has_earned", "own_parameters"]

#: how a :class:`BranchBandit` chooses its point in the arm it pulls
MOVES = ("search", "random", "parzen")
#: how the rest of a burst chooses its points in the arm pulled
REFINES = ("search", "parzen")
#: the most combinations of the condition parents' values :func:`own_parameters` looks at
OWN_COMBINATIONS = 4096


def _roots(space) -> list[set[int]]:
    """For each column, the columns its activity depends on, directly or through a
    conditional parent."""
    index = {n: d for d, n in enumerate(space.names)}
    dims = list(space.dimensions.values())

    def roots(d, seen=()):
        cond = dims[d].when
        if cond is None or d in seen:
            return set()
        out = set()
        for name in cond.parents():
            p = index[name]
            out |= {p} | roots(p, (*seen, d))
        return out

    return [roots(d) for d in range(len(dims))]


def _condition_counts(space) -> np.ndarray:
    """For each column, how many parameters' activity depends on it, directly or through a
    conditional parent."""
    counts = np.zeros(len(space.names), dtype=int)
    for parents in _roots(space):
        for p in parents:
            counts[p] += 1
    return counts


def branch_dimension(space, counts: np.ndarray | None = None) -> int | None:
    """The column of the unconditional categorical parameter on which the most conditions
    depend, directly or through a conditional parent (the first of equals), or None
    (``counts``: the space's :func:`_condition_counts`, where the caller has them)."""
    dims = list(space.dimensions.values())
    counts = _condition_counts(space) if counts is None else counts
    return _most_depended_on(space, counts, lambda d: dims[d].when is None)


def nested_dimension(space, path, counts: np.ndarray | None = None) -> int | None:
    """The column of the conditional categorical parameter, active once the choices ``path``
    (``(column, value index)`` pairs) are made and conditioned on those columns only, on which
    the most conditions depend (the first of equals), or None: the choice nested under the
    last of ``path`` (``counts`` as :func:`branch_dimension`'s)."""
    fixed = {d for d, _ in path}
    row = np.full((1, len(space.names)), 0.5)
    for d, arm in path:
        row[0, d] = (arm + 0.5) / abs(int(space.levels[d]))
    C = space.canonical(row)[0]
    active = (C >= 0.0) & (C <= 1.0)
    index = {n: d for d, n in enumerate(space.names)}
    dims = list(space.dimensions.values())

    def eligible(d):
        when = dims[d].when
        return (when is not None and d not in fixed and bool(active[d])
                and {index[n] for n in when.parents()} <= fixed)

    counts = _condition_counts(space) if counts is None else counts
    return _most_depended_on(space, counts, eligible)


def _most_depended_on(space, counts: np.ndarray, eligible) -> int | None:
    top = [d for d in range(len(counts)) if space.levels[d] < 0 and counts[d] > 0
           and eligible(d)]
    return max(top, key=lambda d: (counts[d], -d)) if top else None


def own_parameters(space, path, below: bool = True) -> int:
    """The most parameters active at once among those whose activity depends on the column of
    the last choice of ``path`` (``(column, value index)`` pairs), directly or through a
    conditional parent, with every choice of ``path`` made: the arm's own parameters, the
    choices nested under it and their parameters included; with ``below=False`` a choice
    nested under the arm counts as one and the parameters under it are left out.  The most
    over every combination of the values of the other categorical parameters some condition
    reads (the first :data:`OWN_COMBINATIONS`), numeric parameters at their middle."""
    roots = _roots(space)
    fixed = {d for d, _ in path}
    last = path[-1][0]
    k = np.abs(space.levels.astype(int))
    parents = [d for d in range(len(roots)) if d not in fixed and space.levels[d] < 0
               and any(d in r for r in roots)]
    mine = [d for d in range(len(roots)) if last in roots[d] and d not in fixed]
    if not below:
        below_choice = {d for d in parents if last in roots[d]}
        mine = [d for d in mine if not roots[d] & below_choice]
    if not mine:
        return 0
    values = itertools.product(*(range(k[d]) for d in parents))
    combos = list(itertools.islice(values, OWN_COMBINATIONS))
    rows = np.full((len(combos), len(space.names)), 0.5)
    for d, arm in path:
        rows[:, d] = (arm + 0.5) / k[d]
    if parents:
        rows[:, parents] = (np.array(combos, dtype=float) + 0.5) / k[parents]
    C = space.canonical(rows)
    active = (C >= 0.0) & (C <= 1.0)
    return int(active[:, mine].sum(axis=1).max())


def _nested_under(space, path, counts, nested, leaf_size: int) -> int | None:
    """The column of the choice :func:`branch_path` makes next under the choices ``path``, or
    None: :func:`nested_dimension` with ``nested``, and with ``nested="leaf"`` only where the
    last choice of ``path`` has at most ``leaf_size`` parameters of its own, a choice nested
    under it counted as one and the parameters under that choice not (:func:`own_parameters`
    with ``below=False``)."""
    if not nested or (nested == "leaf" and own_parameters(space, path, False) > leaf_size):
        return None
    return nested_dimension(space, path, counts)


def max_ucb(arms: np.ndarray, y: np.ndarray, n_arms: int, alpha: float) -> np.ndarray:
    """MaxUCB's index of each of ``n_arms`` arms from the losses ``y`` of the pulls of arms
    ``arms`` (rewards ``-y`` min-max scaled to [0.01, 0.99]; ``inf`` for an arm never pulled)."""
    r = -np.asarray(y, dtype=float)
    lo, hi = r.min(), r.max()
    r = 0.01 + 0.98 * ((r - lo) / (hi - lo) if hi > lo else np.ones_like(r))
    log_t = np.log(r.size)
    out = np.full(n_arms, np.inf)
    for k in range(n_arms):
        mine = r[arms == k]
        if mine.size:
            out[k] = mine.max() + (alpha * log_t / mine.size) ** 2
    return out


def branch_path(space, X: np.ndarray, y: np.ndarray, alpha: float,
                nested: bool | str = True, nested_alpha: float | None = None,
                leaf_size: int = 2, per_arm: int = 0) -> list[tuple[int, int]]:
    """MaxUCB's choices down the space's tree of choices: at the branching parameter
    (:func:`branch_dimension`) from all observations (unit rows ``X``, losses ``y``), then,
    with ``nested``, at the choice nested under each arm pulled (:func:`nested_dimension`)
    from the observations that made every choice above it, until there is no nested choice
    or no such observation.  ``(column, value index)`` pairs, outermost first; empty where
    the space has no branching parameter.  ``nested_alpha``: the exploration weight at the
    nested choices (``alpha`` where None); ``nested="grown"``: on down to a choice of ``k``
    values only once more than ``k * per_arm`` observations made the choices above it (its
    weight then grows); ``nested="leaf"``: on down only under an arm with
    at most ``leaf_size`` parameters of its own, the nested choice counted as one and the
    parameters under it not (:func:`own_parameters` with ``below=False``).  ``per_arm > 0``:
    at a choice of ``k`` values made from ``m`` observations, the exploration weight grows to
    ``alpha * m / (k * per_arm)`` once that is larger (past ``per_arm`` observations an arm on
    average)."""
    counts = _condition_counts(space)  # (the same at every level)
    path: list[tuple[int, int]] = []
    rows = np.arange(len(y))
    d = branch_dimension(space, counts)
    while d is not None and rows.size:
        k = abs(int(space.levels[d]))
        arms = level_index(X[rows, d], k).astype(np.int64)
        a = alpha if not path or nested_alpha is None else nested_alpha
        if per_arm and rows.size > k * per_arm:
            a = a * rows.size / (k * per_arm)
        arm = int(np.argmax(max_ucb(arms, y[rows], k, a)))
        path.append((d, arm))
        rows = rows[arms == arm]
        d = _nested_under(space, path, counts, nested, leaf_size)
        if nested == "grown" and d is not None and rows.size <= abs(int(space.levels[d])) * per_arm:
            d = None  # (not yet grown: the pull draws the nested choice as the move does)
    return path


def _flat_dimensions(space) -> list[int]:
    """The columns of the unconditional categorical parameters of more than one value: the
    bandits of :func:`flat_path`, in column order."""
    dims = list(space.dimensions.values())
    return [d for d in range(len(dims)) if space.levels[d] < 0
            and abs(int(space.levels[d])) > 1 and dims[d].when is None]


def flat_path(space, X: np.ndarray, y: np.ndarray, alpha: float) -> list[tuple[int, int]]:
    """MaxUCB's choice among the values of each unconditional categorical parameter, from all
    observations (unit rows ``X``, losses ``y``): ``(column, value index)`` pairs in column
    order; empty where the space has no such parameter or no observation."""
    path = []
    for d in _flat_dimensions(space) if len(y) else ():
        k = abs(int(space.levels[d]))
        arms = level_index(X[:, d], k).astype(np.int64)
        path.append((d, int(np.argmax(max_ucb(arms, y, k, alpha)))))
    return path


def path_of(space, u: np.ndarray, nested: bool | str = False, flat: bool = False,
            leaf_size: int = 2) -> list[tuple[int, int]]:
    """The choices of the unit row ``u`` at the columns :func:`branch_path` (with ``nested``
    and ``leaf_size``) or, in a space without a branching parameter, :func:`flat_path` (with
    ``flat``) chooses at: ``(column, value index)`` pairs, outermost first, down to the first
    inactive one."""
    counts = _condition_counts(space)
    path: list[tuple[int, int]] = []
    d = branch_dimension(space, counts)
    while d is not None and 0.0 <= u[d] <= 1.0:
        path.append((d, int(level_index(u[d], abs(int(space.levels[d]))))))
        d = _nested_under(space, path, counts, nested, leaf_size)
    if d is None and not path and flat:
        path = [(d, int(level_index(u[d], abs(int(space.levels[d])))))
                for d in _flat_dimensions(space)]
    return path


def _inside(space, path):
    """A function of unit rows: whether each makes every choice of ``path``."""
    ks = [abs(int(space.levels[d])) for d, _ in path]

    def inside(U):
        keep = np.ones(U.shape[:-1], dtype=bool)
        for (d, arm), k in zip(path, ks):
            keep &= level_index(U[..., d], k) == arm
        return keep
    return inside


def arm_has_earned(space, X: np.ndarray, y: np.ndarray, path, quantile: float = 0.5) -> bool:
    """Whether the best loss among the observations (unit rows ``X``, losses ``y``) that make
    every choice of ``path`` is below the ``quantile`` of all losses (the median by default;
    False where there is none)."""
    mine = _inside(space, path)(X)
    return bool(mine.any()) and float(y[mine].min()) < float(np.quantile(y, quantile))


def _bool_or(x, words) -> bool:
    """Whether ``x`` is True, False or one of the strings ``words``."""
    return isinstance(x, bool) or (isinstance(x, str) and x in words)


def _positive(x) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and 0 < x < float("inf")


@dataclass(frozen=True)
class BranchBandit(Step):
    """Before each proposal after the initial design, MaxUCB's choice among the values of
    the space's branching parameter (:func:`branch_dimension`) from the observations; a point
    of that arm when it is not the best observation's, else pass.  A failed evaluation counts
    with the loss the study holds for it (:class:`~mfbo.study.Study`'s ``on_failure``).
    Passes in a space without a branching parameter (unless ``flat``) and in a finite
    candidate set.

    Parameters
    ----------
    alpha : float, default=0.5
        MaxUCB's exploration weight (the authors' default).
    move : {"search", "random", "parzen"}, default="parzen"
        The point in the arm pulled: the acquisition's best point of the arm (``n_random``
        random points and local searches from the arm's best observations); a uniformly
        random point of the arm; or one whose other parameters are drawn from the Parzen
        density of the best observations, so that the good values of the parameters the
        arms share (a preprocessing) go with it.
    n_random : int, default=2000
        Random points scored per ``"search"`` proposal before local search.
    patience : int, default=6
        With ``patience > 0`` the bandit is asked only while the run stalls: after at least
        ``patience`` evaluations in a row that did not improve the best loss by more than
        ``tol`` of its magnitude (:func:`~mfbo.proposal.steps.stall.failures_in_a_row`,
        TuRBO's count); 0: before every proposal, as MaxUCB itself.
    tol : float, default=1e-3
        The margin of an improvement that ends a stall.
    nested : bool, "leaf" or "grown", default=False
        Whether the bandit chooses on down the tree of choices (:func:`branch_path`): the
        value of the choice nested under the arm pulled (a kernel under a model family), from
        that arm's observations, and so on; the step then proposes when some choice on that
        path differs from the best observation's, with all of them made.  ``"leaf"``: on down
        only under an arm with at most ``leaf_size`` parameters of its own, the nested choice
        counted as one and the parameters under it not (:func:`own_parameters` with
        ``below=False``: a tree's inner split, not an SVM's kernel beside its C and epsilon);
        below any other arm the pull draws the nested choice as the move does.  ``"grown"``
        (with ``grow_per_arm``): on down to a nested choice only once its weight grows, past
        an average of ``grow_per_arm`` observations for each of its values: a short run
        chooses as without nesting, a long one looks again at a neglected leaf.
    nested_alpha : float, optional
        MaxUCB's exploration weight at the nested choices (``alpha`` where None).
    flat : bool, default=False
        Whether, in a space without a branching parameter, each unconditional categorical
        parameter is a bandit of its own (:func:`flat_path`); the step then proposes when some
        parameter's choice differs from the best observation's value, with all of them made.
    per_parameter : bool, "earned" or "leaf", default=False
        With the ``"parzen"`` move, whether every parameter of the point, the choices nested
        under the arm included, is drawn from a density made for each parameter of the best
        of the observations where it is active
        (:func:`~mfbo.proposal.steps.branch.random_draws`): the pull goes near the arm's own
        best values, a step of the arm's own search, as a pull of MaxUCB is, instead of
        drawing the arm's parameters from the prior and its nested choices uniformly;
        ``"earned"``: so only when the arm's best loss is below the ``earn_quantile`` of the
        losses (:func:`arm_has_earned`), the default's draw otherwise; ``"leaf"``: so only when
        the last arm of the pull's choices has at most ``leaf_size`` parameters active at once
        of its own, nested choices and their parameters included (:func:`own_parameters`: a
        leaf with one real, not a model family of several), the default's draw otherwise.
    earn_quantile : float, default=0.5
        With ``per_parameter="earned"``, the quantile of all losses an arm's best must be
        below for its pulls to be drawn near its best (0.5: the median).
    leaf_size : int, default=2
        With ``per_parameter="leaf"`` or ``nested="leaf"``, the most parameters of its own an
        arm may have to count as a leaf.
    burst : int, default=1
        How many proposals in a row a pull makes in the arm it pulled (the choices of the
        pull's :func:`path_of`): after the pull, ``burst - 1`` more by ``refine``, unless the
        arm holds the best observation before the burst is over (the steps after the bandit
        refine it then).
    refine : {"search", "parzen"}, default="search"
        How the rest of a burst chooses its points: the acquisition's best point of the arm
        (``n_random`` random points and local searches from the arm's best observations), or
        one drawn from the per-parameter Parzen densities with the arm's choices made.
    cooldown : int, default=0
        After a pull (a proposal of this step), how many proposals the bandit is not asked:
        it passes while one of the last ``cooldown`` observations is its own, so that during
        a stall at most one proposal in ``cooldown + 1`` is a pull and the steps after it
        refine the incumbent in between; 0: asked before every proposal of a stall.
    grow_after : int, default=0
        With ``grow_after > 0``, the exploration weights (``alpha``, ``nested_alpha``) grow in
        proportion to the evaluations past that many: ``alpha * max(1, n / grow_after)`` with
        ``n`` observations, so that a long run looks again at arms a short one may leave (the
        same proposals up to ``grow_after`` evaluations); 0: constant.
    grow_per_arm : int, default=0
        With ``grow_per_arm > 0``, the exploration weight at each choice grows in proportion to
        the observations an arm has on average past that many (:func:`branch_path`'s
        ``per_arm``): a choice of many values (six model families) explores longer before it
        grows than one of two (a mode, a leaf); 0: constant.
    """

    origin: ClassVar[str] = "bandit"

    alpha: float = 0.5
    move: str = "parzen"
    n_random: int = 2_000
    patience: int = 6
    tol: float = 1e-3
    nested: bool = False
    nested_alpha: float | None = None
    flat: bool = False
    per_parameter: bool | str = False
    earn_quantile: float = 0.5
    leaf_size: int = 2
    burst: int = 1
    refine: str = "search"
    cooldown: int = 0
    grow_after: int = 0
    grow_per_arm: int = 0

    def __post_init__(self):
        if not _positive(self.alpha):
            raise ValueError(f"BranchBandit(alpha=...) must be a positive number, got "
                             f"{self.alpha!r}.")
        if self.move not in MOVES:
            raise ValueError(f"BranchBandit(move=...) must be one of {MOVES}, got "
                             f"{self.move!r}.")
        check_int(self.n_random, "BranchBandit(n_random=...)")
        check_int(self.patience, "BranchBandit(patience=...)", minimum=0)
        if isinstance(self.tol, bool) or not isinstance(self.tol, (int, float)) or not (
                0.0 <= self.tol < 1.0):
            raise ValueError(f"BranchBandit(tol=...) must be a number in [0, 1), got "
                             f"{self.tol!r}.")
        if self.nested_alpha is not None and not _positive(self.nested_alpha):
            raise ValueError(f"BranchBandit(nested_alpha=...) must be None or a positive "
                             f"number, got {self.nested_alpha!r}.")
        if not isinstance(self.flat, bool):
            raise ValueError(f"BranchBandit(flat=...) must be True or False, got "
                             f"{self.flat!r}.")
        if not _bool_or(self.nested, ("leaf", "grown")):
            raise ValueError(f"BranchBandit(nested=...) must be True, False, 'leaf' or 'grown', "
                             f"got {self.nested!r}.")
        if self.nested == "grown" and not self.grow_per_arm:
            raise ValueError("BranchBandit(nested='grown') needs grow_per_arm > 0, got "
                             "grow_per_arm=0.")
        pp = self.per_parameter
        if not _bool_or(pp, ("earned", "leaf")):
            raise ValueError(f"BranchBandit(per_parameter=...) must be True, False, 'earned' "
                             f"or 'leaf', got {pp!r}.")
        if pp is not False and self.move != "parzen":
            raise ValueError(f"BranchBandit(per_parameter={pp!r}) needs move='parzen', got "
                             f"move={self.move!r}.")
        q = self.earn_quantile
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0.0 < q < 1.0:
            raise ValueError(f"BranchBandit(earn_quantile=...) must be a number in (0, 1), got "
                             f"{q!r}.")
        check_int(self.leaf_size, "BranchBandit(leaf_size=...)")
        check_int(self.burst, "BranchBandit(burst=...)")
        if self.refine not in REFINES:
            raise ValueError(f"BranchBandit(refine=...) must be one of {REFINES}, got "
                             f"{self.refine!r}.")
        check_int(self.cooldown, "BranchBandit(cooldown=...)", minimum=0)
        check_int(self.grow_after, "BranchBandit(grow_after=...)", minimum=0)
        check_int(self.grow_per_arm, "BranchBandit(grow_per_arm=...)", minimum=0)

    def choice(self, ctx: Context) -> list[tuple[int, int]] | None:
        """The bandit's choices (:func:`branch_path`) when some differs from the best
        observation's, or None where the step passes."""
        space, study = ctx.space, ctx.study
        if ctx.candidates is not None or study.obs.n == 0:
            return None
        if ctx.number < ctx.proposer.n_initial:
            return None
        if self.patience and failures_in_a_row(study.obs.y, ctx.proposer.n_initial,
                                               self.tol) < self.patience:
            return None
        if self.cooldown and self.origin in study.obs_origins[-self.cooldown:]:
            return None
        X, y = study.obs.X, study.obs.y
        alpha, nested_alpha = self.weights(study.obs.n)
        path = branch_path(space, X, y, alpha, self.nested, nested_alpha, self.leaf_size,
                           self.grow_per_arm)
        if not path and self.flat:
            path = flat_path(space, X, y, alpha)
        incumbent = X[int(np.argmin(y))]
        levels = space.levels
        # (an empty path, a space without a branching parameter, passes too)
        if all(int(level_index(incumbent[d], abs(int(levels[d])))) == arm for d, arm in path):
            return None
        return path

    def weights(self, n: int) -> tuple[float, float | None]:
        """``(alpha, nested_alpha)`` after ``n`` observations (see ``grow_after``)."""
        if not self.grow_after or n <= self.grow_after:
            return self.alpha, self.nested_alpha
        g = n / self.grow_after
        return self.alpha * g, None if self.nested_alpha is None else self.nested_alpha * g

    def continuing(self, ctx: Context) -> list[tuple[int, int]] | None:
        """The choices of a burst under way, or None: the arm (:func:`path_of`) of the last
        observation when it was proposed by this step, the observations of that arm proposed
        by it at the end of the study are not a multiple of ``burst`` (a pull and its
        refinements, then the next pull), and the arm does not hold the best observation."""
        if self.burst == 1 or ctx.candidates is not None or ctx.study.obs.n == 0:
            return None
        origins, X, y = ctx.study.obs_origins, ctx.study.obs.X, ctx.study.obs.y
        path = path_of(ctx.space, X[-1], self.nested, self.flat, self.leaf_size)
        if not path or origins[-1] != self.origin:
            return None
        inside = _inside(ctx.space, path)
        run = 0
        while run < len(origins) and origins[-1 - run] == self.origin and inside(X[-1 - run]):
            run += 1
        if run % self.burst == 0 or inside(X[int(np.argmin(y))]):
            return None
        return path

    def propose(self, ctx: Context) -> Point | None:
        path = self.continuing(ctx)
        if path is not None:
            if self.refine == "search":
                return self.search_in(ctx, path)
            return self.draw_in(ctx, path, True)
        path = self.choice(ctx)
        if path is None:
            return None
        if self.move == "search":
            return self.search_in(ctx, path)
        pp = self.per_parameter
        if pp == "earned":
            pp = arm_has_earned(ctx.space, ctx.study.obs.X, ctx.study.obs.y, path,
                                self.earn_quantile)
        elif pp == "leaf":
            pp = own_parameters(ctx.space, path) <= self.leaf_size
        return self.draw_in(ctx, path, pp)

    def search_in(self, ctx: Context, path) -> Point:
        """The acquisition's best new point that makes every choice of ``path``: ``n_random``
        random points and local searches from the best observations that make them."""
        X, y = ctx.study.obs.X, ctx.study.obs.y
        inside = _inside(ctx.space, path)
        mine = np.flatnonzero(inside(X))
        starts = X[mine[np.argsort(y[mine], kind="stable")][:10]] if mine.size else None
        return ctx.best_where(inside, self.n_random, starts)

    def draw_in(self, ctx: Context, path, per_parameter: bool) -> Point:
        """A new allowed point drawn by the move (``"random"`` or ``"parzen"``, with
        ``per_parameter``) with every choice of ``path`` made."""
        space = ctx.space
        U = random_draws(ctx, parzen=self.move == "parzen" or per_parameter,
                         per_parameter=per_parameter)
        for d, arm in path:
            U[:, d] = (arm + 0.5) / abs(int(space.levels[d]))
        return first_allowed_new(ctx, space.canonical(U))
