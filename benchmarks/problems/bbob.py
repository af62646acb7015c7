"""The ``bbob`` suite: COCO's 24 noiseless BBOB functions, evaluated by COCO's own code.

The functions are those of Hansen, Finck, Ros & Auger (2009), "Real-parameter black-box
optimization benchmarking 2009: noiseless functions definitions", as implemented by the COCO
platform (Hansen et al. 2021) and reached through its Python package ``cocoex`` (PyPI
``coco-experiment``; ``pip install "mfbo[bbob]"``, also part of the ``peers`` extra).  Only
evaluating a problem needs ``cocoex``: the suite, its names and splits are known without it,
and the first evaluation (or :meth:`BBOBFunction.load`, which ``mfbo bench`` calls before any
run) raises :class:`CocoexUnavailable`, saying what to install, when it is missing.

Problems
    ``bbob-f<FF>-d<DD>-i<II>``: function ``FF`` (1-24, :data:`FUNCTIONS`), dimension ``DD``
    (one of COCO's 2, 3, 5, 10, 20, 40) and COCO instance ``II`` (1-999), each number
    zero-padded to two digits, e.g. ``bbob-f03-d05-i07``.  An instance is COCO's instance
    number, the ``i`` of COCO's own problem id (``bbob_f003_i07_d05``): it fixes the random
    shift of the optimum, the rotations and the optimal value.  Every such name can be run
    (:func:`parse_name`); the suite lists dimensions 2, 5, 10, 20 (:data:`SUITE_DIMENSIONS`)
    and instances 1-10, 24 x 4 x 10 = 960 problems.  A problem's family
    (:func:`family_name`) is its function and dimension, ``bbob-f03-d05``: the instances of
    one family are one landscape moved, rotated and offset at random.

Search space and objective
    The box [-5, 5]^D, COCO's region of interest (the problem's own lower and upper bounds),
    with dimensions ``x1..xD``.  The value reported is ``f(x) - f_opt``, so the optimum is 0
    and a method's final best is its precision, COCO's measure.  ``cocoex`` exposes no
    optimal value (``best_observed_fvalue1`` is the best value evaluated so far; the private
    ``Problem._f0`` fails on ``final_target_fvalue1``, an attribute cocoex 2.8 no longer
    has, and ``Problem._best_parameter`` writes the optimum's location to a file in the
    working directory), so ``f_opt`` is computed as COCO's C code computes it
    (:func:`optimal_value`): ``100 * g1 / g2`` for two Gaussian draws of the BBOB 2009 random
    generator seeded by function and instance, rounded to two decimals and clipped to
    [-1000, 1000].  It is exact: COCO's function at COCO's own optimum equals it within 5e-13
    for all 24 functions, in every dimension for instances 1-15 and in dimension 2 for
    instances 1-999 (the tests check a sample), so ``f - f_opt`` is never below 0 beyond
    that rounding.  Measuring against the best value any method found instead would make the
    regret depend on which methods were run.  A run counts as having reached the optimum at
    ``f - f_opt <= 1e-3``, the harness's threshold for a continuous problem whose optimum is 0
    (:meth:`benchmarks.problems.problems.Problem.target`), far looser than COCO's final target 1e-8,
    which budgets of a few hundred evaluations rarely reach.

Dev / test split
    Dev: instances 1-5; test: instances 6-10; every function and suite dimension on both
    sides.  A default tuned on dev thus meets the same landscapes on test, shifted, rotated
    and offset anew, so a default that learnt one instance's optimum location does not carry
    over.  Instances 1-5 are the ones every yearly COCO suite since 2009 contains.

Budgets
    The benchmark protocol uses two budgets per dimension: ``20 D + 20`` evaluations, a
    problem's default budget (:func:`default_budget`: 60 in 2-D, 420 in 20-D), and
    ``100 D`` (:data:`LARGE_BUDGET`), run with ``mfbo bench --budget 100D``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np

__all__ = ["FUNCTIONS", "DIMENSIONS", "SUITE_DIMENSIONS", "DEV_INSTANCES", "TEST_INSTANCES",
           "MAX_INSTANCE", "LOWER", "UPPER", "LARGE_BUDGET", "BBOBFunction",
           "CocoexUnavailable", "default_budget", "family_name", "optimal_value",
           "parse_name", "problem_name", "spec", "specs"]

#: the 24 noiseless functions of Hansen et al. (2009), by number
FUNCTIONS = {
    1: "sphere", 2: "separable ellipsoid", 3: "Rastrigin", 4: "Bueche-Rastrigin",
    5: "linear slope", 6: "attractive sector", 7: "step ellipsoid", 8: "Rosenbrock",
    9: "rotated Rosenbrock", 10: "ellipsoid", 11: "discus", 12: "bent cigar",
    13: "sharp ridge", 14: "different powers", 15: "rotated Rastrigin", 16: "Weierstrass",
    17: "Schaffers F7", 18: "ill-conditioned Schaffers F7", 19: "Griewank-Rosenbrock",
    20: "Schwefel", 21: "Gallagher 101 peaks", 22: "Gallagher 21 peaks", 23: "Katsuura",
    24: "Lunacek bi-Rastrigin",
}
#: every dimension COCO's bbob suite defines
DIMENSIONS = (2, 3, 5, 10, 20, 40)
#: the dimensions the suite lists
SUITE_DIMENSIONS = (2, 5, 10, 20)
DEV_INSTANCES = (1, 2, 3, 4, 5)
TEST_INSTANCES = (6, 7, 8, 9, 10)
#: the largest instance number a name may carry
MAX_INSTANCE = 999
#: the box searched, [LOWER, UPPER]^D
LOWER, UPPER = -5.0, 5.0
#: the protocol's second budget, as ``mfbo bench --budget`` reads it
LARGE_BUDGET = "100D"

_NAME = re.compile(r"bbob-f(\d+)-d(\d+)-i(\d+)")
_INSTALL = 'pip install coco-experiment (or pip install "mfbo[bbob]")'


class CocoexUnavailable(ImportError):
    """COCO's ``cocoex`` package, needed to evaluate a ``bbob`` problem, is not installed."""


def problem_name(function: int, dimension: int, instance: int) -> str:
    """``bbob-f<FF>-d<DD>-i<II>``, each number zero-padded to two digits."""
    return f"bbob-f{function:02d}-d{dimension:02d}-i{instance:02d}"


def family_name(function: int, dimension: int) -> str:
    """``bbob-f<FF>-d<DD>``: the problems of one function and dimension."""
    return f"bbob-f{function:02d}-d{dimension:02d}"


def parse_name(name: str) -> tuple[int, int, int] | None:
    """``(function, dimension, instance)`` of a problem name, ``None`` if ``name`` does not
    start with ``"bbob-f"``; ``ValueError`` (naming the rule broken) for a malformed name or
    a number out of range."""
    if not isinstance(name, str) or not name.startswith("bbob-f"):
        return None
    m = _NAME.fullmatch(name)
    if m is None:
        raise ValueError(f"bbob problem name {name!r} is not of the form bbob-f<FF>-d<DD>-i<II>, "
                         f"e.g. bbob-f03-d05-i07.")
    function, dimension, instance = map(int, m.groups())
    if not 1 <= function <= len(FUNCTIONS):
        raise ValueError(f"{name!r}: the function must be 1..24, got {function}.")
    if dimension not in DIMENSIONS:
        raise ValueError(f"{name!r}: the dimension must be one of {list(DIMENSIONS)}, got "
                         f"{dimension}.")
    if not 1 <= instance <= MAX_INSTANCE:
        raise ValueError(f"{name!r}: the instance must be 1..{MAX_INSTANCE}, got {instance}.")
    if name != problem_name(function, dimension, instance):
        raise ValueError(f"bbob problem name {name!r} is not zero-padded; write "
                         f"{problem_name(function, dimension, instance)!r}.")
    return function, dimension, instance


def default_budget(dimension: int) -> int:
    """``20 D + 20``, the protocol's smaller budget."""
    return 20 * int(dimension) + 20


# -- the optimal value, as COCO's C code computes it ---------------------------------------------
def _uniform(n: int, seed: int) -> list[float]:
    """The BBOB 2009 generator of uniform numbers (Park-Miller minimal standard with a
    32-entry shuffle table), as COCO keeps it for its legacy functions."""
    seed = max(abs(int(seed)), 1)
    table = [0] * 32
    for i in range(39, -1, -1):
        seed = _park_miller(seed)
        if i < 32:
            table[i] = seed
    current = table[0]
    out = []
    for _ in range(n):
        seed = _park_miller(seed)
        j = current // 67108865
        current = table[j]
        table[j] = seed
        out.append(current / 2.147483647e9 or 1e-99)
    return out


def _park_miller(seed: int) -> int:
    q = seed // 127773
    seed = 16807 * (seed - q * 127773) - 2836 * q
    return seed + 2147483647 if seed < 0 else seed


def _gaussian(seed: int) -> float:
    u1, u2 = _uniform(2, seed)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2) or 1e-99


@functools.lru_cache(maxsize=None)
def optimal_value(function: int, instance: int) -> float:
    """COCO's optimal value ``f_opt`` of a bbob function and instance (any dimension).

    Functions 4 and 18 share the seeds of 3 and 17, as in COCO."""
    seed = {4: 3, 18: 17}.get(int(function), int(function)) + 10000 * int(instance)
    ratio = 100.0 * 100.0 * _gaussian(seed) / _gaussian(seed + 1)
    return min(1000.0, max(-1000.0, math.floor(ratio + 0.5) / 100.0))


# -- evaluation ------------------------------------------------------------------------------------
def _cocoex():
    try:
        import cocoex
    except ImportError as err:
        raise CocoexUnavailable(f"the bbob problems are evaluated by COCO's cocoex package, "
                                f"which cannot be imported ({err}); {_INSTALL}.") from err
    return cocoex


@functools.lru_cache(maxsize=64)
def _coco_problem(function: int, dimension: int, instance: int):
    """COCO's problem object, built once per process (a one-problem suite: cheap).  The suite
    is kept with it so it outlives the problem."""
    suite = _cocoex().Suite("bbob", f"instances: {instance}",
                            f"dimensions: {dimension} function_indices: {function}")
    problem = suite[0]
    expected = f"bbob_f{function:03d}_i{instance:02d}_d{dimension:02d}"
    if problem.id != expected:  # a cocoex that reads its options differently
        raise RuntimeError(f"cocoex gave problem {problem.id!r} for {expected!r}.")
    return suite, problem


@dataclass(frozen=True)
class BBOBFunction:
    """``f(X) - f_opt`` of one bbob problem on the rows of an ``(n, D)`` array.

    Holds only the three numbers, so it pickles and compares by value; COCO's problem object
    is built on the first evaluation and cached per process."""

    function: int
    dimension: int
    instance: int

    def __post_init__(self):
        parse_name(problem_name(self.function, self.dimension, self.instance))

    @property
    def optimum(self) -> float:
        """``f_opt``, subtracted from every value."""
        return optimal_value(self.function, self.instance)

    def load(self) -> "BBOBFunction":
        """Build COCO's problem now (:class:`CocoexUnavailable` if cocoex is missing)."""
        _coco_problem(self.function, self.dimension, self.instance)
        return self

    def __call__(self, X) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        if X.ndim != 2 or X.shape[1] != self.dimension:
            raise ValueError(f"X must have {self.dimension} columns, got shape {X.shape}.")
        if not np.isfinite(X).all():
            raise ValueError("X holds NaN or infinite values.")
        _, problem = _coco_problem(self.function, self.dimension, self.instance)
        return np.array([problem(x) for x in X], dtype=float) - self.optimum


def specs() -> list[dict]:
    """Every problem of the suite: ``name``, ``space`` (``{"x1": (-5, 5), ...}``),
    ``function`` (a :class:`BBOBFunction`), ``optimum`` (0: values are ``f - f_opt``),
    ``budget`` (``20 D + 20``), ``split`` and ``family``; functions x dimensions x
    instances in that order."""
    out = []
    for function in FUNCTIONS:
        for dimension in SUITE_DIMENSIONS:
            for instance in (*DEV_INSTANCES, *TEST_INSTANCES):
                out.append(spec(function, dimension, instance))
    return out


def spec(function: int, dimension: int, instance: int) -> dict:
    """The spec (as in :func:`specs`) of any bbob problem; its ``split`` is ``None`` outside
    the suite's dimensions and instances."""
    split = ("dev" if instance in DEV_INSTANCES else "test" if instance in TEST_INSTANCES
             else None)
    return dict(name=problem_name(function, dimension, instance),
                space={f"x{j}": (LOWER, UPPER) for j in range(1, dimension + 1)},
                function=BBOBFunction(function, dimension, instance), optimum=0.0,
                budget=default_budget(dimension),
                split=split if dimension in SUITE_DIMENSIONS else None,
                family=family_name(function, dimension))
