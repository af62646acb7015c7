"""Benchmark objectives for Bayesian optimization (minimisation).

A problem is a :class:`Problem`: a search space, a vectorised function on the problem's own
coordinates, the known optimum and HPOlib's budget.  Register a new one in ``PROBLEMS``.

Five kinds:

* continuous (``branin``, ``hartmann6``, ...): the box is searched freely;
* random-grid (``branin-grid``, ``hartmann6-grid``), :class:`RandomGridProblem`: the same function
  restricted to 250,000 uniform random points of the box, as in the papers (three different
  grids x five runs: run ``seed`` uses grid ``seed % 3``, and grid ``g`` is
  ``base.random_grid(250_000, seed=g)``);
* table (``lda-grid``, ``svm-grid``), :class:`TableProblem`: exact look-up of a measured grid
  (``benchmarks.problems.data``); the log-scaled axes are ``Real(..., log=True)`` and the table
  rows are the candidate set.

* mixed (the suites ``sklearn-tune`` and ``mixed``), :class:`ConfigProblem`: a space of real,
  integer and categorical dimensions whose objective takes a configuration dict; its minimum
  may be unknown (``optimum=None``).
* bbob (the suite ``bbob``), :class:`BBOBProblem`: COCO's 24 noiseless functions on the box
  [-5, 5]^D, evaluated by COCO's ``cocoex`` package (only when evaluated), the value
  ``f - f_opt`` so that the optimum is 0.

When a run counts as having reached the optimum (:meth:`Problem.target`): table problems need
the exact table minimum; continuous problems need ``f* + 1e-3 |f*|`` (``1e-3`` when
``f* = 0``); random-grid problems need the easier of that and the grid's own minimum (the best
a method restricted to the grid can do), so methods that search the box and methods that
enumerate the grid are judged by one threshold.  A problem whose minimum is unknown has no
target; the report measures its runs against the best value any run found.

Suites (:data:`SUITES`) are named sets of problems split into *dev* (defaults are tuned on it)
and *test* (reported, never tuned on): ``sklearn-tune`` (:mod:`benchmarks.problems.sklearn_tune`),
``mixed`` (:mod:`benchmarks.problems.mixed`), ``bbob`` (:mod:`benchmarks.problems.bbob`:
instances 1-5 dev, 6-10 test), ``tune-world`` (:mod:`benchmarks.problems.tune_world`: model
families and space shapes beyond bayesmark's) and ``conditional``
(:mod:`benchmarks.problems.conditional`: conditional spaces, model selection and synthetic
trees), whose module docstrings give the split and its reasons.  One more, ``multi-fidelity``
(:mod:`benchmarks.problems.multi_fidelity`: learning curves, trained step by step), is listed
for its split but run by its own command (:attr:`Suite.command`; its problems are not
:class:`Problem`s and not in ``PROBLEMS``): naming it or one of its problems where problems
are read is a ``ValueError`` that gives the command.  Wherever problem names
are read (:func:`expand_problems`, ``mfbo bench --problem``), a suite name stands for all its
problems, ``<suite>:dev`` / ``<suite>:test`` for one split; any bbob problem
``bbob-f<FF>-d<DD>-i<II>`` can be named, in the suite or not (:func:`get_problem`).

A problem's *family* (:func:`family_of`) is the problem without its data set or instance: the
model and metric of an ``sklearn-tune`` problem, the function and dimension of a bbob problem,
the kind of a ``mixed`` problem (mixed Ackley, engineering design, pipeline choice), the
problem itself elsewhere.  The report tests each method against the reference family by
family.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from benchmarks.problems import bbob, conditional, mixed, multi_fidelity, sklearn_tune, tune_world
from mfbo import Real, Space

__all__ = ["Problem", "RandomGridProblem", "TableProblem", "ConfigProblem", "BBOBProblem",
           "Suite", "PROBLEMS", "SUITES", "branin", "hartmann6", "hartmann3", "rosenbrock",
           "ackley", "levy", "get_problem", "expand_problems", "split_of", "family_of",
           "TARGET_RTOL"]

#: relative tolerance within which a continuous problem's optimum counts as reached
TARGET_RTOL = 1e-3


def _bounds_of(dim) -> tuple[float, float]:
    return (float(dim.low), float(dim.high)) if hasattr(dim, "low") else tuple(map(float, dim))


@dataclass
class Problem:
    """``f(X)`` on an ``(n, D)`` array in the order of ``space``'s names.

    ``space`` maps names to ``(low, high)`` (or to ``mfbo`` dimensions); ``optimum`` is the
    known minimum; ``budget`` HPOlib's number of evaluations.
    """

    name: str
    space: dict
    f: Callable[[np.ndarray], np.ndarray]
    optimum: float
    budget: int

    kind = "continuous"

    @property
    def names(self) -> list[str]:
        return list(getattr(self.space, "names", self.space))  # (a Space, or a dict)

    def __call__(self, **params) -> float:
        """The objective as ``mfbo.minimize`` calls it: keyword arguments, one float."""
        x = np.array([[params[n] for n in self.names]], dtype=float)
        return float(self.f(x)[0])

    def bounds(self) -> np.ndarray:
        return np.array([_bounds_of(d) for d in self.space.values()], dtype=float)

    def candidate_set(self, seed: int):
        """``(candidates, grid index)`` for run ``seed``: ``(None, None)`` (the box is searched)."""
        return None, None

    @property
    def continuous(self) -> "Problem":
        """The problem on the continuous box (itself here; a random-grid problem's base)."""
        return self

    def target(self, seed: int) -> float:
        """The best-so-far value at or below which run ``seed`` has reached the optimum:
        ``optimum + 1e-3 |optimum|`` (``optimum + 1e-3`` when the optimum is 0)."""
        tol = TARGET_RTOL * abs(self.optimum) if self.optimum != 0 else TARGET_RTOL
        return float(self.optimum + tol)

    def random_grid(self, n: int, seed: int) -> np.ndarray:
        """``n`` uniform random points of the box (the papers' 250,000-point candidate grids)."""
        b = self.bounds()
        return b[:, 0] + np.random.default_rng(seed).random((n, len(b))) * (b[:, 1] - b[:, 0])


def branin(X):
    X = np.atleast_2d(X)
    x1, x2 = X[:, 0], X[:, 1]
    a, b, c, r, s, t = 1.0, 5.1 / (4 * np.pi**2), 5 / np.pi, 6.0, 10.0, 1 / (8 * np.pi)
    return a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * np.cos(x1) + s


_H6_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                  [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
_H6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547],
                         [381, 5743, 8828]])


def _hartmann(X, A, P):
    X = np.atleast_2d(X)
    inner = ((X[:, None, :] - P[None]) ** 2 * A[None]).sum(axis=2)
    return -(np.exp(-inner) * _H_ALPHA).sum(axis=1)


def hartmann6(X):
    return _hartmann(X, _H6_A, _H6_P)


def hartmann3(X):
    return _hartmann(X, _H3_A, _H3_P)


def rosenbrock(X):
    X = np.atleast_2d(X)
    return (100 * (X[:, 1:] - X[:, :-1] ** 2) ** 2 + (1 - X[:, :-1]) ** 2).sum(axis=1)


def ackley(X):
    X = np.atleast_2d(X)
    d = X.shape[1]
    return (-20 * np.exp(-0.2 * np.sqrt((X**2).sum(axis=1) / d))
            - np.exp(np.cos(2 * np.pi * X).sum(axis=1) / d) + 20 + np.e)


def levy(X):
    X = np.atleast_2d(X)
    w = 1 + (X - 1) / 4
    term = (w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2)
    return (np.sin(np.pi * w[:, 0]) ** 2 + term.sum(axis=1)
            + (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2))


@dataclass
class RandomGridProblem(Problem):
    """A continuous problem restricted to ``n_grids`` fixed sets of ``n_points`` uniform random
    points of its box; run ``seed`` searches grid ``seed % n_grids`` (the papers: 3 grids of
    250,000 points, 5 runs each).  Grid ``g`` is ``base.random_grid(n_points, seed=g)``."""

    base: Problem | None = None
    n_points: int = 250_000
    n_grids: int = 3
    _grids: dict = field(default_factory=dict, repr=False, compare=False)

    kind = "random-grid"

    def grid_index(self, seed: int) -> int:
        return int(seed) % self.n_grids

    def grid(self, g: int) -> np.ndarray:
        """Grid ``g`` as an ``(n_points, D)`` array (built once, then cached)."""
        if g not in self._grids:
            X = self.base.random_grid(self.n_points, seed=g)
            self._grids[g] = (X, float(np.min(self.f(X))))
        return self._grids[g][0]

    def grid_minimum(self, g: int) -> float:
        self.grid(g)
        return self._grids[g][1]

    def candidate_set(self, seed: int):
        g = self.grid_index(seed)
        return self.grid(g), g

    @property
    def continuous(self) -> Problem:
        return self.base

    def target(self, seed: int) -> float:
        return max(super().target(seed), self.grid_minimum(self.grid_index(seed)))


@dataclass
class TableProblem(Problem):
    """Exact look-up in a measured grid (a CSV file of :mod:`benchmarks.problems.data`).

    ``columns`` maps the file's axis columns to the space's names; ``value_column`` holds the
    loss, multiplied by ``scale``.  A configuration's value is looked up by all its coordinates
    exactly; any other point raises ``ValueError``.  The table is read on first use, from
    ``data_home`` (see :func:`benchmarks.problems.data.fetch_file`).
    """

    file: str = ""
    columns: dict = field(default_factory=dict)
    value_column: str = ""
    scale: float = 1.0
    data_home: str | os.PathLike | None = None
    _table: tuple | None = field(default=None, repr=False, compare=False)

    kind = "table"

    def __post_init__(self):
        # f is this table's look-up (also in a dataclasses.replace copy, never the original's)
        if self.f is None or getattr(self.f, "__func__", None) is TableProblem._lookup:
            self.f = self._lookup

    def load(self, data_home: str | os.PathLike | None = None) -> "TableProblem":
        """Read the table (once), checked: ``FileNotFoundError`` says where to put a missing
        file, :class:`benchmarks.problems.data.ChecksumError` names a damaged one, ``ValueError`` a
        table that is not the full grid this problem expects."""
        if self._table is None:
            from benchmarks.problems.data import read_table

            path = self.file
            frame = read_table(self.file,
                               data_home if data_home is not None else self.data_home)
            missing = [c for c in [*self.columns, self.value_column] if c not in frame.columns]
            if missing:
                raise ValueError(f"{path}: no column {missing[0]!r}; columns: "
                                 f"{list(frame.columns)}.")
            X = frame[list(self.columns)].to_numpy(dtype=float)
            # rounding keeps e.g. 0.2411 * 100 at the decimal 24.11
            y = np.round(frame[self.value_column].to_numpy(dtype=float) * self.scale, 10)
            for j, name in enumerate(self.names):
                lo, hi = _bounds_of(self.space[name])
                if X[:, j].min() != lo or X[:, j].max() != hi:
                    raise ValueError(f"{path}: column {list(self.columns)[j]!r} spans "
                                     f"[{X[:, j].min()}, {X[:, j].max()}], the space of "
                                     f"{self.name!r} expects [{lo}, {hi}].")
            index = {tuple(row): i for i, row in enumerate(X.tolist())}
            if len(index) != len(X):
                raise ValueError(f"{path}: duplicated grid cells.")
            full = int(np.prod([np.unique(X[:, j]).size for j in range(X.shape[1])]))
            if len(X) != full:
                raise ValueError(f"{path}: {len(X)} cells, but its axes span a full grid of "
                                 f"{full}; rows are missing.")
            if float(y.min()) != self.optimum:
                raise ValueError(f"{path}: minimum {y.min()} differs from the registered "
                                 f"optimum {self.optimum} of {self.name!r}.")
            self._table = (X, y, index)
        return self

    @property
    def cells(self) -> np.ndarray:
        """The grid cells, one row per configuration, columns in the order of ``names``."""
        return self.load()._table[0]

    @property
    def values(self) -> np.ndarray:
        """The loss of every cell (rows of :attr:`cells`)."""
        return self.load()._table[1]

    def axes(self) -> dict[str, list[float]]:
        """Each axis' distinct values, sorted (the peers' ordinal choices)."""
        return {n: sorted(set(self.cells[:, j].tolist())) for j, n in enumerate(self.names)}

    def _lookup(self, X) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        _, y, index = self.load()._table
        out = np.empty(len(X))
        for i, row in enumerate(X.tolist()):
            j = index.get(tuple(row))
            if j is None:
                raise ValueError(f"{dict(zip(self.names, row))} is not a cell of the "
                                 f"{self.name} table.")
            out[i] = y[j]
        return out

    def candidate_set(self, seed: int):
        import pandas as pd

        return pd.DataFrame(self.cells, columns=self.names), None

    def target(self, seed: int) -> float:
        return float(self.optimum)


PROBLEMS: dict[str, Problem] = {
    "branin": Problem("branin", {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}, branin, 0.397887, 200),
    "hartmann6": Problem("hartmann6", {f"x{i}": (0.0, 1.0) for i in range(1, 7)}, hartmann6,
                         -3.32237, 200),
    "hartmann3": Problem("hartmann3", {f"x{i}": (0.0, 1.0) for i in range(1, 4)}, hartmann3,
                         -3.86278, 200),
    "rosenbrock2": Problem("rosenbrock2", {"x1": (-5.0, 10.0), "x2": (-5.0, 10.0)}, rosenbrock,
                           0.0, 200),
    "ackley5": Problem("ackley5", {f"x{i}": (-32.768, 32.768) for i in range(1, 6)}, ackley,
                       0.0, 200),
    "levy4": Problem("levy4", {f"x{i}": (-10.0, 10.0) for i in range(1, 5)}, levy, 0.0, 200),
}
for _name in ("branin", "hartmann6"):
    _p = PROBLEMS[_name]
    PROBLEMS[f"{_name}-grid"] = RandomGridProblem(f"{_name}-grid", _p.space, _p.f, _p.optimum,
                                                  _p.budget, base=_p)
# LDA: kappa linear, tau0 and minibatch size S log-scaled; minimise perplexity (50 evaluations)
PROBLEMS["lda-grid"] = TableProblem(
    "lda-grid", {"kappa": Real(0.5, 1.0), "tau0": Real(1.0, 1024.0, log=True),
                 "S": Real(1.0, 16384.0, log=True)}, None, 1266.167382, 50,
    file="lda_on_grid.csv", columns={"kappa": "kappa", "tau0": "tau0", "S_minibatch": "S"},
    value_column="perplexity")
# SVM: C, alpha, epsilon log-scaled; minimise the error in percent (100 evaluations)
PROBLEMS["svm-grid"] = TableProblem(
    "svm-grid", {"C": Real(0.1, 1e6, log=True), "alpha": Real(0.1, 5.0, log=True),
                 "epsilon": Real(1e-4, 0.1, log=True)}, None, 24.11, 100,
    file="svm_on_grid.csv", columns={"C": "C", "alpha": "alpha", "epsilon": "epsilon"},
    value_column="error", scale=100.0)




@dataclass
class ConfigProblem(Problem):
    """A problem on a space of real, integer and categorical dimensions.

    ``objective(params)`` takes one configuration, a dict ``name -> value`` checked against
    ``space`` (an integer given as an integral float becomes an int; a value outside the space
    is a ``ValueError``), and returns the loss.  ``optimum`` is ``None`` when the minimum is
    unknown: such a problem has no target.  An ``objective`` with a ``load(data_home)``
    method reads its data there (:meth:`load`).  ``f`` evaluates rows of an array (an object
    array when there are categoricals), one configuration per row.
    """

    objective: Callable[[dict], float] | None = None
    _space: Space | None = field(default=None, repr=False, compare=False)

    kind = "mixed"

    def __post_init__(self):
        if self.objective is None:
            raise TypeError(f"ConfigProblem {self.name!r} needs an objective.")
        self._space = Space(self.space)
        if self.f is None or getattr(self.f, "__func__", None) is ConfigProblem._rows:
            self.f = self._rows

    def __call__(self, **params) -> float:
        return float(self.objective(self._space.validate(params)))

    def _rows(self, X) -> np.ndarray:
        return np.array([self(**dict(zip(self.names, row))) for row in np.atleast_2d(X)],
                        dtype=float)

    def load(self, data_home: str | os.PathLike | None = None) -> "ConfigProblem":
        """Read the objective's data now, if it has any (the errors of
        :mod:`benchmarks.problems.data`: a missing or damaged file)."""
        if hasattr(self.objective, "load"):
            self.objective.load(data_home)
        return self

    def bounds(self) -> np.ndarray:
        if any(not hasattr(d, "low") for d in self._space.dimensions.values()):
            raise TypeError(f"{self.name!r} has categorical dimensions: no box.")
        return super().bounds()

    def target(self, seed: int) -> float | None:
        """As :meth:`Problem.target`; ``None`` when the minimum is unknown."""
        return None if self.optimum is None else super().target(seed)


@dataclass(frozen=True)
class Suite:
    """A named set of problems, split into ``dev`` (tune on it) and ``test`` (report on it);
    ``command`` runs a suite that ``mfbo bench`` does not (empty: ``mfbo bench`` runs it)."""

    name: str
    dev: tuple[str, ...]
    test: tuple[str, ...]
    description: str = ""
    command: str = ""

    def problems(self, split: str | None = None) -> list[str]:
        """The problem names of ``split`` ("dev", "test"; ``None``: both, dev first)."""
        if split is None:
            return [*self.dev, *self.test]
        if split not in ("dev", "test"):
            raise ValueError(f"split must be 'dev' or 'test', got {split!r}.")
        return list(getattr(self, split))


@dataclass
class BBOBProblem(Problem):
    """A problem of COCO's bbob suite (:mod:`benchmarks.problems.bbob`): ``f`` is a
    :class:`benchmarks.problems.bbob.BBOBFunction`, whose values are ``f - f_opt`` (``optimum`` 0).
    :meth:`load` checks that COCO's ``cocoex`` is installed."""

    def load(self, data_home: str | os.PathLike | None = None) -> "BBOBProblem":
        """Build COCO's problem now: :class:`benchmarks.problems.bbob.CocoexUnavailable` (an
        ``ImportError`` saying what to install) when ``cocoex`` is missing.  ``data_home`` is
        not used (the functions need no data)."""
        self.f.load()
        return self


def _config_problem(spec: dict) -> ConfigProblem:
    return ConfigProblem(spec["name"], spec["space"], None, spec["optimum"], spec["budget"],
                         objective=spec["objective"])


def _bbob_problem(spec: dict) -> BBOBProblem:
    return BBOBProblem(spec["name"], spec["space"], spec["function"], spec["optimum"],
                       spec["budget"])


def _register_suite(name: str, description: str, specs: list[dict],
                    make: Callable[[dict], Problem]) -> None:
    for spec in specs:
        PROBLEMS[spec["name"]] = make(spec)
        FAMILIES[spec["name"]] = spec["family"]
    SUITES[name] = Suite(name, tuple(s["name"] for s in specs if s["split"] == "dev"),
                         tuple(s["name"] for s in specs if s["split"] == "test"), description)


SUITES: dict[str, Suite] = {}
#: problem of a suite -> its family (see :func:`family_of`)
FAMILIES: dict[str, str] = {}


def _register_suites() -> None:
    _register_suite("sklearn-tune", "scikit-learn models tuned by 5-fold cross-validation "
                    "(bayesmark's spaces)", sklearn_tune.specs(), _config_problem)
    _register_suite("mixed", "integer and categorical dimensions: mixed Ackley, engineering "
                    "designs, a pipeline choice", mixed.specs(), _config_problem)
    _register_suite("bbob", "COCO's 24 noiseless BBOB functions in 2, 5, 10, 20 dimensions, "
                    "instances 1-10 (needs cocoex)", bbob.specs(), _bbob_problem)
    _register_suite("tune-world", "model families and space shapes beyond bayesmark's (boosting, "
                    "extra trees, SGD, logistic regression, naive Bayes with selection, wide "
                    "kNN and SVM, polynomial ridge) tuned by 3-fold cross-validation",
                    tune_world.specs(), _config_problem)
    _register_suite("conditional", "conditional spaces: CASH (a preprocessing and a model family "
                    "chosen with their own hyper-parameters) by 3-fold cross-validation, and "
                    "tree-structured functions, two with forbidden regions",
                    conditional.specs(), _config_problem)
    SUITES["multi-fidelity"] = Suite(
        "multi-fidelity", multi_fidelity.DEV, multi_fidelity.TEST,
        multi_fidelity.DESCRIPTION + ", for methods that stop trials early, scored by the "
        "cost they spend",
        command="python -m benchmarks.harness.multi_fidelity --split dev|test --seeds N "
                "--out F.jsonl (then --report F.jsonl)")
    FAMILIES.update(multi_fidelity.FAMILIES)


_register_suites()


def _refuse_elsewhere(suite: Suite, name: str) -> None:
    """``ValueError`` giving the command when ``suite`` (of the name ``name``) is run by one."""
    if suite.command:
        raise ValueError(f"{name!r}: mfbo bench does not run the {suite.name} suite "
                         f"({suite.description}); run it with: {suite.command}")


def family_of(name: str) -> str:
    """The family of a problem: its name without the data set or instance (the model and
    metric of an ``sklearn-tune`` problem, ``sklearn-DT-acc``; the function and dimension of
    a bbob problem, ``bbob-f03-d05``; the kind of a ``mixed`` problem, ``mixed-ackley``,
    ``engineering-design``, ``mixed-pipeline``); any other problem is its own family.
    ``ValueError`` for a malformed bbob name."""
    if name in FAMILIES:
        return FAMILIES[name]
    parsed = bbob.parse_name(name)
    if parsed is not None:
        return bbob.family_name(*parsed[:2])
    return name


def get_problem(name: str) -> Problem:
    """The registered problem ``name``, or any bbob problem ``bbob-f<FF>-d<DD>-i<II>`` (built
    on demand when it is not in the suite); ``ValueError`` lists the known names otherwise,
    or says what is wrong with a bbob name."""
    if name not in PROBLEMS and bbob.parse_name(name) is not None:
        return _bbob_problem(bbob.spec(*bbob.parse_name(name)))
    if name not in PROBLEMS:
        if split_of(name) is not None:
            _refuse_elsewhere(SUITES[split_of(name)[0]], name)
        if name.split(":")[0] in SUITES:
            raise ValueError(f"{name!r} is a suite, not a problem; expand it with "
                             f"expand_problems.")
        others = sorted(n for n in PROBLEMS if split_of(n) is None)
        raise ValueError(f"unknown problem {name!r}; problem must be one of {others}, a "
                         f"problem of a suite, or a suite {sorted(SUITES)} (optionally "
                         f"':dev' or ':test').")
    return PROBLEMS[name]


def expand_problems(names) -> list[str]:
    """Problem names, each suite (``"sklearn-tune"``) or suite split (``"mixed:test"``)
    replaced by its problems, in order, duplicates dropped.  ``names`` is a comma-separated
    string or an iterable of names.  ``ValueError`` for an unknown name or split."""
    if isinstance(names, str):
        names = names.split(",")
    out = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        suite, _, split = name.partition(":")
        if suite in SUITES:
            _refuse_elsewhere(SUITES[suite], name)
            out += SUITES[suite].problems(split or None)
        else:
            get_problem(name)  # the error names what is known
            out.append(name)
    if not out:
        raise ValueError("give at least one problem or suite name.")
    return list(dict.fromkeys(out))


def split_of(name: str) -> tuple[str, str] | None:
    """``(suite, "dev" or "test")`` of a problem of a suite, else ``None``."""
    for suite in SUITES.values():
        if name in suite.dev:
            return suite.name, "dev"
        if name in suite.test:
            return suite.name, "test"
    return None
