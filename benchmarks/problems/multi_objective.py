"""Problems of several objectives and problems with black-box constraints, from their published
formulas, and scikit-learn tuning with two objectives.

A :class:`OutcomeProblem` evaluates a configuration dict to a dict of named outcomes: its
objectives (all minimised) and its constraints (met when ``<= 0``).  Several objectives are
scored by the hypervolume their feasible values dominate below :attr:`OutcomeProblem.reference`;
one objective with constraints by the best feasible value.

- ``zdt1``, ``zdt2``, ``zdt3`` (Zitzler, Deb and Thiele 2000), ``d`` = 4: convex, concave and
  disconnected fronts; ``f1 = x1``, ``g = 1 + 9 mean(x2..xd)``.  ``zdt2-d6``: ZDT2 with
  ``d`` = 6 (dev).
- ``dtlz2-k<k>`` (Deb, Thiele, Laumanns and Zitzler 2002) with ``k`` objectives and
  ``k + 2`` variables: a spherical front, ``g = sum (x_i - 0.5)^2`` over the last three.
- ``dtlz7-k3``: DTLZ7 with 3 objectives and 5 variables, ``f1 = x1``, ``f2 = x2``,
  ``f3 = (1 + g) (3 - sum_i f_i / (1 + g) (1 + sin(3 pi f_i)))``, ``g = 1 + 9 mean(x3..x5)``:
  a front of four disconnected patches where ``g = 1``.
- ``branin-constrained`` (Gardner et al. 2014): Branin subject to
  ``(x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50``; feasible optimum 0.397887 at (pi, 2.275).
- ``gramacy-toy`` (Gramacy et al. 2016): ``x1 + x2`` on the unit square subject to
  ``1.5 - x1 - 2 x2 - 0.5 sin(2 pi (x1^2 - 2 x2)) <= 0`` and ``x1^2 + x2^2 - 1.5 <= 0``;
  feasible optimum 0.5998 at about (0.1954, 0.4044).
- ``linear-constraint`` and ``disc-constraint``: ``(x - 1)^2 + (y - 1)^2`` on the unit square
  subject to ``x + y <= 0.6`` (optimum 0.98) or to ``(x - 0.3)^2 + (y - 0.3)^2 <= 0.09``
  (optimum ``(0.99 - 0.3)^2 = 0.4761`` on the boundary).
- ``camel-disc``: the six-hump camel function on [-2, 2] x [-1, 1] subject to lying at least
  0.6 from both its global minima (+-0.0898, -+0.7126), so that the low values just inside
  either disc tempt a search to its boundary; feasible optimum -0.215464 at about
  (+-1.7036, -+0.7961), the camel's other two minima.
- ``gardner-toy`` (Gardner et al. 2014's first problem): ``cos(2x) cos(y) + sin(x)`` on
  [0, 6]^2 subject to ``cos(x) cos(y) - sin(x) sin(y) <= 0.5``; feasible optimum -2 at
  (3 pi / 2, 0).
- ``tree-<data>``: a decision tree's validation error against its number of leaves (a 30 %
  holdout; ``max_depth``, ``min_samples_leaf``, ``ccp_alpha``, ``criterion``), on scikit-learn's
  bundled ``breast_cancer`` and ``digits``.

- ``pressure-vessel`` (Kannan and Kramer 1994, as in Coello 2000, thicknesses continuous in
  [0.0625, 6.1875]): the cost of a cylindrical vessel with hemispherical heads subject to
  the shell's and the head's minimum thicknesses and a volume of at least 1,296,000 cubic
  inches (in millions, the constraint's units); feasible optimum 5885.3328 at about
  (0.7782, 0.3846, 40.32, 200).
- ``welded-beam`` (Coello 2000): the cost of a welded beam subject to its shear stress,
  bending stress, deflection, buckling load (each divided by its limit) and the weld being
  no thicker than the beam; feasible optimum 1.724852 at about (0.2057, 3.4705, 9.0366,
  0.2057).
- ``tree-cancer-small``: ``tree-cancer``'s validation error subject to at most 8 leaves.
- ``spring-design`` (the tension/compression spring, Belegundu 1982, as in Coello 2000): the
  weight of a coil spring subject to its minimum deflection, shear stress, surge frequency
  and outer diameter; wire and coil diameters and the number of coils continuous; feasible
  optimum 0.0126652 at about (0.05169, 0.35675, 11.2871).
- ``speed-reducer-constrained``: the weight of Golinski's (1970) speed reducer
  (:func:`benchmarks.problems.mixed.speed_reducer_design`, the ``mixed`` suite's problem
  without the penalty) subject to its eleven constraints, the number of teeth an integer;
  feasible optimum 2994.471066.
- Problems that crash: ``<problem>-crash`` evaluates as ``<problem>`` but raises (a failed
  trial, like a run out of memory) where one of its constraints is violated, a constraint it
  does not declare (:attr:`OutcomeProblem.crash`): ``linear-crash`` and ``disc-crash`` (one
  objective, no declared constraint), ``linear-disc-crash`` (the linear constraint declared,
  a crash outside the disc; optimum 0.98 at (0.3, 0.3)), ``disc-linear-crash`` (the disc
  declared, a crash beyond the line; the same optimum), ``zdt1-crash`` (ZDT1 crashing where
  ``x0 + 2 x1 > 0.8``, which cuts the front at ``f1 = 0.8``), ``branin-crash`` and
  ``gramacy-crash`` (``c1`` declared, a crash where ``c2`` is violated).  Their optima are
  those of the problems they crash from.

Split: dev (what settings were chosen on) ``zdt1``, ``dtlz2-k2``, ``dtlz2-k4``, ``dtlz7-k3``,
``linear-constraint``, ``disc-constraint``, ``tree-cancer``; test ``zdt2``, ``zdt3``,
``dtlz2-k3``, ``branin-constrained``, ``gramacy-toy``, ``tree-digits``: other front shapes,
another number of objectives, published constrained problems and another data set
(``dtlz2-k4`` and ``dtlz7-k3`` joined dev later, so that more than two objectives are
chosen on as well; ``camel-disc`` and ``gardner-toy`` later still, after the test split's
``branin-constrained`` showed runs drawn to the boundary next to an infeasible minimum: dev
problems with that shape; ``zdt2-d6`` after the test split's ``zdt2`` showed runs whose front
stays the single point ``(0, 1)``, which dominates every trade-off off the front: a dev
problem with that trap).  The problems that crash
have splits of their own: ``crash-dev`` (``linear-crash``, ``disc-crash``,
``linear-disc-crash``, ``disc-linear-crash``, ``zdt1-crash``) and ``crash-test``
(``branin-crash``, ``gramacy-crash``).  ``constraint-test`` (``pressure-vessel``,
``welded-beam``, ``tree-cancer-small``) joined after the test split's runs: more constrained
problems, never chosen on.  ``constraint-dev`` (``spring-design``,
``speed-reducer-constrained``) joined later still, so that settings of the constrained search
for more than two dimensions are chosen on problems of their own.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["OutcomeProblem", "OUTCOME_PROBLEMS", "SPLITS", "get_outcome_problem", "Crash",
           "FAILED"]


@dataclass(frozen=True)
class OutcomeProblem:
    """A problem of several outcomes.

    ``space``: ``name -> ("real", low, high, log) | ("int", low, high, log) | ("cat",
    choices)``; ``evaluate(params) -> {name: value}`` holding every objective and constraint;
    ``reference``: the hypervolume's reference point (several objectives); ``optimum``: the
    best feasible value (one objective), where known."""

    name: str
    space: dict
    evaluate: Callable[[dict], dict]
    objectives: tuple
    constraints: tuple = ()
    reference: tuple | None = None
    optimum: float | None = None
    split: str = "dev"
    notes: dict = field(default_factory=dict, compare=False)
    #: an outcome of ``evaluate`` that is not declared: the evaluation raises where it is
    #: above 0 (None: it never raises)
    crash: str | None = None

    @property
    def k(self) -> int:
        return len(self.objectives)

    def feasible(self, outcome: dict) -> bool:
        """Whether an outcome meets every constraint (a failed evaluation's, ``FAILED``,
        does not)."""
        return not outcome.get("failed") and all(outcome[c] <= 0 for c in self.constraints)

    def run(self, params: dict) -> dict:
        """``evaluate(params)``, raising :class:`Crash` where the problem crashes."""
        out = self.evaluate(params)
        if self.crash is not None and out[self.crash] > 0:
            raise Crash(f"{self.name} crashed ({self.crash} = {out[self.crash]:.3g} > 0)")
        return out if self.crash is None else {k: v for k, v in out.items()
                                               if k != self.crash}


class Crash(RuntimeError):
    """An evaluation of a problem that crashes, where it crashes."""


#: the outcome a method records for a failed evaluation
FAILED = {"failed": 1.0}


def _crashing(problem: OutcomeProblem, crash: str, split: str, name: str | None = None,
              optimum: float | None = None) -> OutcomeProblem:
    """``problem`` with its constraint ``crash`` undeclared: a crash where it is violated."""
    return dataclasses.replace(
        problem, name=name or f"{problem.name.split('-')[0]}-crash", split=split, crash=crash,
        constraints=tuple(c for c in problem.constraints if c != crash),
        optimum=problem.optimum if optimum is None else optimum)


def _zdt(variant: int, d: int = 4) -> Callable:
    def f(p):
        x = np.array([p[f"x{i}"] for i in range(d)])
        g = 1.0 + 9.0 * x[1:].mean()
        r = x[0] / g
        h = {1: 1 - math.sqrt(r), 2: 1 - r ** 2,
             3: 1 - math.sqrt(r) - r * math.sin(10 * math.pi * x[0])}[variant]
        return {"f1": float(x[0]), "f2": float(g * h)}
    return f


def _dtlz2(k: int) -> Callable:
    d = k + 2

    def f(p):
        x = np.array([p[f"x{i}"] for i in range(d)])
        g = float(((x[k - 1:] - 0.5) ** 2).sum())
        out = {}
        for m in range(k):
            v = 1.0 + g
            for j in range(k - 1 - m):
                v *= math.cos(x[j] * math.pi / 2)
            if m > 0:
                v *= math.sin(x[k - 1 - m] * math.pi / 2)
            out[f"f{m + 1}"] = v
        return out
    return f


def _dtlz7(k: int) -> Callable:
    d = k + 2

    def f(p):
        x = np.array([p[f"x{i}"] for i in range(d)])
        g = 1.0 + 9.0 * float(x[k - 1:].mean())
        first = [float(v) for v in x[:k - 1]]  # f1 .. f(k-1)
        h = k - sum(v / (1.0 + g) * (1.0 + math.sin(3 * math.pi * v)) for v in first)
        return {**{f"f{m + 1}": v for m, v in enumerate(first)}, f"f{k}": (1.0 + g) * h}
    return f


def _branin(p):
    x1, x2 = p["x1"], p["x2"]
    value = ((x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2
             + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)
    return {"f": value, "disc": (x1 - 2.5) ** 2 + (x2 - 7.5) ** 2 - 50.0}


def _gramacy(p):
    x1, x2 = p["x1"], p["x2"]
    return {"f": x1 + x2,
            "c1": 1.5 - x1 - 2 * x2 - 0.5 * math.sin(2 * math.pi * (x1 ** 2 - 2 * x2)),
            "c2": x1 ** 2 + x2 ** 2 - 1.5}


def _camel_disc(p):
    x, y = p["x"], p["y"]
    f = (4 - 2.1 * x ** 2 + x ** 4 / 3) * x ** 2 + x * y + (-4 + 4 * y ** 2) * y ** 2
    near = min((x - 0.0898) ** 2 + (y + 0.7126) ** 2, (x + 0.0898) ** 2 + (y - 0.7126) ** 2)
    return {"f": f, "c": 0.36 - near}


def _gardner(p):
    x, y = p["x"], p["y"]
    return {"f": math.cos(2 * x) * math.cos(y) + math.sin(x),
            "c": math.cos(x) * math.cos(y) - math.sin(x) * math.sin(y) - 0.5}


def _corner(constraint: str) -> Callable:
    def f(p):
        x, y = p["x"], p["y"]
        c = x + y - 0.6 if constraint == "linear" else (x - 0.3) ** 2 + (y - 0.3) ** 2 - 0.09
        return {"f": (x - 1) ** 2 + (y - 1) ** 2, "c": c}
    return f


_DATA = {}


def _tree(data: str) -> Callable:
    def f(p):
        from sklearn.model_selection import train_test_split
        from sklearn.tree import DecisionTreeClassifier

        if data not in _DATA:
            from sklearn import datasets

            X, y = {"cancer": datasets.load_breast_cancer,
                    "digits": datasets.load_digits}[data](return_X_y=True)
            _DATA[data] = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
        X_train, X_valid, y_train, y_valid = _DATA[data]
        tree = DecisionTreeClassifier(max_depth=int(p["max_depth"]),
                                      min_samples_leaf=int(p["min_samples_leaf"]),
                                      ccp_alpha=float(p["ccp_alpha"]),
                                      criterion=p["criterion"], random_state=0)
        tree.fit(X_train, y_train)
        return {"error": float(1.0 - tree.score(X_valid, y_valid)),
                "leaves": float(tree.get_n_leaves())}
    return f


def _unit(d: int) -> dict:
    return {f"x{i}": ("real", 0.0, 1.0, False) for i in range(d)}


_TREE_SPACE = {"max_depth": ("int", 1, 16, False), "min_samples_leaf": ("int", 1, 64, True),
               "ccp_alpha": ("real", 1e-5, 0.1, True), "criterion": ("cat", ("gini", "entropy"))}

OUTCOME_PROBLEMS = {p.name: p for p in [
    OutcomeProblem("zdt1", _unit(4), _zdt(1), ("f1", "f2"), reference=(1.1, 11.0)),
    OutcomeProblem("zdt2", _unit(4), _zdt(2), ("f1", "f2"), reference=(1.1, 11.0),
                   split="test"),
    OutcomeProblem("zdt2-d6", _unit(6), _zdt(2, 6), ("f1", "f2"), reference=(1.1, 11.0)),
    OutcomeProblem("zdt3", _unit(4), _zdt(3), ("f1", "f2"), reference=(1.1, 11.0),
                   split="test"),
    OutcomeProblem("dtlz2-k2", _unit(4), _dtlz2(2), ("f1", "f2"), reference=(2.0, 2.0)),
    OutcomeProblem("dtlz2-k3", _unit(5), _dtlz2(3), ("f1", "f2", "f3"),
                   reference=(2.0, 2.0, 2.0), split="test"),
    OutcomeProblem("dtlz2-k4", _unit(6), _dtlz2(4), ("f1", "f2", "f3", "f4"),
                   reference=(2.0, 2.0, 2.0, 2.0)),
    OutcomeProblem("dtlz7-k3", _unit(5), _dtlz7(3), ("f1", "f2", "f3"),
                   reference=(1.1, 1.1, 12.0)),
    OutcomeProblem("branin-constrained", {"x1": ("real", -5.0, 10.0, False),
                                          "x2": ("real", 0.0, 15.0, False)},
                   _branin, ("f",), ("disc",), optimum=0.397887, split="test"),
    OutcomeProblem("gramacy-toy", {"x1": ("real", 0.0, 1.0, False),
                                   "x2": ("real", 0.0, 1.0, False)},
                   _gramacy, ("f",), ("c1", "c2"), optimum=0.5998, split="test"),
    OutcomeProblem("linear-constraint", {"x": ("real", 0.0, 1.0, False),
                                         "y": ("real", 0.0, 1.0, False)},
                   _corner("linear"), ("f",), ("c",), optimum=0.98),
    OutcomeProblem("disc-constraint", {"x": ("real", 0.0, 1.0, False),
                                       "y": ("real", 0.0, 1.0, False)},
                   _corner("disc"), ("f",), ("c",), optimum=0.4761),
    OutcomeProblem("camel-disc", {"x": ("real", -2.0, 2.0, False),
                                  "y": ("real", -1.0, 1.0, False)},
                   _camel_disc, ("f",), ("c",), optimum=-0.215464),
    OutcomeProblem("gardner-toy", {"x": ("real", 0.0, 6.0, False),
                                   "y": ("real", 0.0, 6.0, False)},
                   _gardner, ("f",), ("c",), optimum=-2.0),
    OutcomeProblem("tree-cancer", _TREE_SPACE, _tree("cancer"), ("error", "leaves"),
                   reference=(0.5, 100.0)),
    OutcomeProblem("tree-digits", _TREE_SPACE, _tree("digits"), ("error", "leaves"),
                   reference=(1.0, 400.0), split="test"),
]}



def _linear_disc(p):
    out = _corner("linear")(p)
    return {**out, "disc": _corner("disc")(p)["c"]}


def _disc_linear(p):
    return {"f": _corner("disc")(p)["f"], "c": _corner("disc")(p)["c"],
            "linear": _corner("linear")(p)["c"]}


def _zdt1_cut(p):
    return {**_zdt(1)(p), "cut": p["x0"] + 2 * p["x1"] - 0.8}


_P = OUTCOME_PROBLEMS
OUTCOME_PROBLEMS.update({p.name: p for p in [
    _crashing(_P["linear-constraint"], "c", "crash-dev"),
    _crashing(_P["disc-constraint"], "c", "crash-dev"),
    _crashing(dataclasses.replace(_P["linear-constraint"], evaluate=_linear_disc), "disc",
              "crash-dev", name="linear-disc-crash"),
    _crashing(dataclasses.replace(_P["disc-constraint"], evaluate=_disc_linear), "linear",
              "crash-dev", name="disc-linear-crash", optimum=0.98),
    _crashing(dataclasses.replace(_P["zdt1"], evaluate=_zdt1_cut), "cut", "crash-dev",
              name="zdt1-crash"),
    _crashing(_P["branin-constrained"], "disc", "crash-test"),
    _crashing(_P["gramacy-toy"], "c2", "crash-test"),
]})



def _pressure_vessel(p):
    ts, th, r, length = p["ts"], p["th"], p["r"], p["length"]
    return {"cost": (0.6224 * ts * r * length + 1.7781 * th * r ** 2
                     + 3.1661 * ts ** 2 * length + 19.84 * ts ** 2 * r),
            "shell": 0.0193 * r - ts, "head": 0.00954 * r - th,
            # (the volume's constraint in millions of cubic inches, so that it is of the
            # others' size)
            "volume": (1_296_000.0 - math.pi * r ** 2 * length
                       - 4.0 / 3.0 * math.pi * r ** 3) / 1e6}


def _welded_beam(p):
    h, l, t, b = p["h"], p["l"], p["t"], p["b"]
    load, span, e, g = 6000.0, 14.0, 30e6, 12e6
    tau1 = load / (math.sqrt(2.0) * h * l)
    moment = load * (span + l / 2.0)
    radius = math.sqrt(l ** 2 / 4.0 + ((h + t) / 2.0) ** 2)
    inertia = 2.0 * (math.sqrt(2.0) * h * l * (l ** 2 / 12.0 + ((h + t) / 2.0) ** 2))
    tau2 = moment * radius / inertia
    tau = math.sqrt(tau1 ** 2 + 2.0 * tau1 * tau2 * l / (2.0 * radius) + tau2 ** 2)
    sigma = 6.0 * load * span / (b * t ** 2)
    delta = 4.0 * load * span ** 3 / (e * t ** 3 * b)
    critical = (4.013 * e * math.sqrt(t ** 2 * b ** 6 / 36.0) / span ** 2
                * (1.0 - t / (2.0 * span) * math.sqrt(e / (4.0 * g))))
    # each constraint divided by its limit (met when <= 0)
    return {"cost": 1.10471 * h ** 2 * l + 0.04811 * t * b * (14.0 + l),
            "shear": tau / 13_600.0 - 1.0, "bending": sigma / 30_000.0 - 1.0,
            "weld": h - b, "deflection": delta / 0.25 - 1.0,
            "buckling": 1.0 - critical / load}


def _tree_small(p):
    out = _tree("cancer")(p)
    return {"error": out["error"], "leaves": out["leaves"] - 8.0}


OUTCOME_PROBLEMS.update({p.name: p for p in [
    OutcomeProblem("pressure-vessel", {"ts": ("real", 0.0625, 6.1875, False),
                                       "th": ("real", 0.0625, 6.1875, False),
                                       "r": ("real", 10.0, 200.0, False),
                                       "length": ("real", 10.0, 200.0, False)},
                   _pressure_vessel, ("cost",), ("shell", "head", "volume"),
                   optimum=5885.3328, split="constraint-test"),
    OutcomeProblem("welded-beam", {"h": ("real", 0.1, 2.0, False), "l": ("real", 0.1, 10.0, False),
                                   "t": ("real", 0.1, 10.0, False), "b": ("real", 0.1, 2.0, False)},
                   _welded_beam, ("cost",), ("shear", "bending", "weld", "deflection",
                                             "buckling"),
                   optimum=1.724852, split="constraint-test"),
    OutcomeProblem("tree-cancer-small", _TREE_SPACE, _tree_small, ("error",), ("leaves",),
                   split="constraint-test"),
]})

def _spring(p):
    d, coil, n = p["d"], p["D"], p["N"]
    return {"weight": (n + 2.0) * coil * d ** 2,
            "deflection": 1.0 - coil ** 3 * n / (71785.0 * d ** 4),
            "shear": ((4.0 * coil ** 2 - d * coil) / (12566.0 * (coil * d ** 3 - d ** 4))
                      + 1.0 / (5108.0 * d ** 2) - 1.0),
            "surge": 1.0 - 140.45 * d / (coil ** 2 * n),
            "diameter": (d + coil) / 1.5 - 1.0}


def _speed_reducer(p):
    from .mixed import speed_reducer_design

    weight, g = speed_reducer_design(p)
    return {"weight": weight, **{f"g{i + 1}": float(v) for i, v in enumerate(g)}}


OUTCOME_PROBLEMS.update({p.name: p for p in [
    OutcomeProblem("spring-design", {"d": ("real", 0.05, 2.0, False),
                                     "D": ("real", 0.25, 1.3, False),
                                     "N": ("real", 2.0, 15.0, False)},
                   _spring, ("weight",), ("deflection", "shear", "surge", "diameter"),
                   optimum=0.0126652, split="constraint-dev"),
    OutcomeProblem("speed-reducer-constrained",
                   {"x1": ("real", 2.6, 3.6, False), "x2": ("real", 0.7, 0.8, False),
                    "x3": ("int", 17, 28, False), "x4": ("real", 7.3, 8.3, False),
                    "x5": ("real", 7.3, 8.3, False), "x6": ("real", 2.9, 3.9, False),
                    "x7": ("real", 5.0, 5.5, False)},
                   _speed_reducer, ("weight",), tuple(f"g{i}" for i in range(1, 12)),
                   optimum=2994.471066, split="constraint-dev"),
]})

#: the problems of each split
SPLITS = {s: [n for n, p in OUTCOME_PROBLEMS.items() if p.split == s]
          for s in ("dev", "test", "crash-dev", "crash-test", "constraint-dev",
                    "constraint-test")}


def get_outcome_problem(name: str) -> OutcomeProblem:
    if name not in OUTCOME_PROBLEMS:
        raise ValueError(f"name must be one of {sorted(OUTCOME_PROBLEMS)}, got {name!r}.")
    return OUTCOME_PROBLEMS[name]
