"""The problems of several objectives and with constraints, against their published optima and
fronts."""

import math

import numpy as np
import pytest

from benchmarks.problems.multi_objective import OUTCOME_PROBLEMS, SPLITS, get_outcome_problem


def test_the_zdt_fronts_where_g_is_one():
    for name, front in [("zdt1", lambda f1: 1 - math.sqrt(f1)),
                        ("zdt2", lambda f1: 1 - f1 ** 2),
                        ("zdt3", lambda f1: 1 - math.sqrt(f1) - f1 * math.sin(10 * math.pi * f1))]:
        p = OUTCOME_PROBLEMS[name]
        for f1 in (0.0, 0.25, 0.8):
            out = p.evaluate({"x0": f1, "x1": 0.0, "x2": 0.0, "x3": 0.0})
            assert out["f1"] == f1 and out["f2"] == pytest.approx(front(f1))
        worst = p.evaluate({"x0": 1.0, "x1": 1.0, "x2": 1.0, "x3": 1.0})
        assert worst["f2"] < p.reference[1]


@pytest.mark.parametrize("name, k", [("dtlz2-k2", 2), ("dtlz2-k3", 3),
                                     ("dtlz2-k4", 4)])
def test_dtlz2_is_the_unit_sphere_where_g_is_zero(name, k):
    p = OUTCOME_PROBLEMS[name]
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = {f"x{i}": (rng.random() if i < k - 1 else 0.5) for i in range(k + 2)}
        out = p.evaluate(x)
        assert sum(out[f"f{m + 1}"] ** 2 for m in range(k)) == pytest.approx(1.0)
    far = p.evaluate({f"x{i}": (0.3 if i < k - 1 else 1.0) for i in range(k + 2)})
    assert sum(far[f"f{m + 1}"] ** 2 for m in range(k)) == pytest.approx(1.75 ** 2)


def test_dtlz7_front_is_where_g_is_one():
    p = OUTCOME_PROBLEMS["dtlz7-k3"]
    out = p.evaluate({"x0": 0.0, "x1": 0.0, "x2": 0.0, "x3": 0.0, "x4": 0.0})
    assert out == {"f1": 0.0, "f2": 0.0, "f3": pytest.approx(6.0)}
    assert p.evaluate({**{f"x{i}": 0.0 for i in range(4)}, "x4": 1.0})["f3"] == \
        pytest.approx(5 * 3)


def test_the_constrained_optima():
    branin = OUTCOME_PROBLEMS["branin-constrained"]
    out = branin.evaluate({"x1": math.pi, "x2": 2.275})
    assert out["f"] == pytest.approx(branin.optimum, abs=1e-5) and branin.feasible(out)
    for x in [(-math.pi, 12.275), (9.42478, 2.475)]:  # the other two minima: infeasible
        assert not branin.feasible(branin.evaluate({"x1": x[0], "x2": x[1]}))
    gramacy = OUTCOME_PROBLEMS["gramacy-toy"]
    out = gramacy.evaluate({"x1": 0.1954, "x2": 0.4044})
    assert out["f"] == pytest.approx(gramacy.optimum, abs=1e-4)
    assert abs(out["c1"]) < 1e-3 and out["c2"] < 0  # on the first constraint's boundary
    grid = np.linspace(0, 1, 401)
    best = min(x1 + x2 for x1 in grid for x2 in grid
               if gramacy.feasible(gramacy.evaluate({"x1": x1, "x2": x2})))
    assert best == pytest.approx(gramacy.optimum, abs=3e-3)
    for name in ("linear-constraint", "disc-constraint"):
        p = OUTCOME_PROBLEMS[name]
        best = min(p.evaluate({"x": x, "y": y})["f"] for x in grid[::4] for y in grid[::4]
                   if p.feasible(p.evaluate({"x": x, "y": y})))
        assert best == pytest.approx(p.optimum, abs=0.01)


def test_the_engineering_designs_at_their_published_optima():
    vessel = OUTCOME_PROBLEMS["pressure-vessel"]
    out = vessel.evaluate({"ts": 0.7781686, "th": 0.3846491, "r": 40.3196187, "length": 200.0})
    assert out["cost"] == pytest.approx(vessel.optimum, abs=1e-3)
    assert max(out[c] for c in vessel.constraints) < 1e-6  # on the three boundaries
    beam = OUTCOME_PROBLEMS["welded-beam"]
    out = beam.evaluate({"h": 0.205730, "l": 3.470489, "t": 9.036624, "b": 0.205730})
    assert out["cost"] == pytest.approx(beam.optimum, abs=1e-5) and beam.feasible(out)
    assert min(-out[c] for c in ("shear", "bending", "weld", "buckling")) > -1e-5  # all active
    rng = np.random.default_rng(0)
    for p in (vessel, beam):  # no random feasible design is cheaper
        for _ in range(2000):
            x = {k: lo + (hi - lo) * rng.random() for k, (_, lo, hi, _) in p.space.items()}
            out = p.evaluate(x)
            assert not p.feasible(out) or out["cost"] > p.optimum
    small = OUTCOME_PROBLEMS["tree-cancer-small"]
    out = small.evaluate({"max_depth": 3, "min_samples_leaf": 5, "ccp_alpha": 1e-4,
                          "criterion": "gini"})
    full = OUTCOME_PROBLEMS["tree-cancer"].evaluate({"max_depth": 3, "min_samples_leaf": 5,
                                                     "ccp_alpha": 1e-4, "criterion": "gini"})
    assert out == {"error": full["error"], "leaves": full["leaves"] - 8}
    assert SPLITS["constraint-test"] == ["pressure-vessel", "welded-beam", "tree-cancer-small"]


def test_the_constrained_dev_designs_at_their_published_optima():
    from benchmarks.problems.mixed import speed_reducer

    spring = OUTCOME_PROBLEMS["spring-design"]
    out = spring.evaluate({"d": 0.051690, "D": 0.356750, "N": 11.287126})
    assert out["weight"] == pytest.approx(spring.optimum, abs=1e-6)
    # two constraints active there (within the published digits), the others met
    assert max(out[c] for c in spring.constraints) < 1e-4
    assert abs(out["deflection"]) < 1e-4 and abs(out["shear"]) < 1e-4
    reducer = OUTCOME_PROBLEMS["speed-reducer-constrained"]
    best = {"x1": 3.5, "x2": 0.7, "x3": 17, "x4": 7.3, "x5": 7.71532, "x6": 3.35021,
            "x7": 5.28665}
    out = reducer.evaluate(best)
    assert out["weight"] == pytest.approx(reducer.optimum, abs=0.01)
    assert max(out[c] for c in reducer.constraints) < 1e-5
    # the mixed suite's penalised problem is the same design: equal where it is feasible
    feasible = {**best, "x5": 7.8, "x6": 3.4, "x7": 5.3}
    out = reducer.evaluate(feasible)
    assert reducer.feasible(out) and speed_reducer(feasible) == pytest.approx(out["weight"])
    rng = np.random.default_rng(0)
    for p, name in ((spring, "weight"), (reducer, "weight")):  # none cheaper at random
        for _ in range(2000):
            x = {k: lo + (hi - lo) * rng.random() for k, (_, lo, hi, _) in p.space.items()}
            if "x3" in x:
                x["x3"] = round(x["x3"])
            out = p.evaluate(x)
            assert not p.feasible(out) or out[name] > p.optimum
    assert SPLITS["constraint-dev"] == ["spring-design", "speed-reducer-constrained"]


def test_the_tree_problems_and_the_splits():
    p = get_outcome_problem("tree-cancer")
    out = p.evaluate({"max_depth": 3, "min_samples_leaf": 5, "ccp_alpha": 1e-4,
                      "criterion": "gini"})
    assert 0 <= out["error"] < 0.2 and 1 <= out["leaves"] <= 8
    assert not set(SPLITS["dev"]) & set(SPLITS["test"])
    assert sorted(sum(SPLITS.values(), [])) == sorted(OUTCOME_PROBLEMS)
    with pytest.raises(ValueError, match="name must be one of"):
        get_outcome_problem("zdt9")


def test_the_problems_that_crash():
    from benchmarks.problems.multi_objective import FAILED, Crash

    assert SPLITS["crash-dev"] == ["linear-crash", "disc-crash", "linear-disc-crash",
                                   "disc-linear-crash", "zdt1-crash"]
    z = get_outcome_problem("zdt1-crash")
    assert (z.objectives, z.constraints, z.reference) == (("f1", "f2"), (), (1.1, 11.0))
    assert set(z.run({"x0": 0.8, "x1": 0.0, "x2": 0.0, "x3": 0.0})) == {"f1", "f2"}
    with pytest.raises(Crash):
        z.run({"x0": 0.81, "x1": 0.0, "x2": 0.0, "x3": 0.0})
    d = get_outcome_problem("disc-linear-crash")
    assert d.constraints == ("c",) and d.crash == "linear" and d.optimum == 0.98
    assert SPLITS["crash-test"] == ["branin-crash", "gramacy-crash"]
    p = get_outcome_problem("linear-disc-crash")
    assert (p.constraints, p.crash, p.optimum) == (("c",), "disc", 0.98)
    assert p.run({"x": 0.3, "y": 0.3}) == {"f": pytest.approx(0.98), "c": 0.0}
    with pytest.raises(Crash, match=r"linear-disc-crash crashed \(disc = 0.09 > 0\)"):
        p.run({"x": 0.0, "y": 0.0})
    g = get_outcome_problem("gramacy-crash")
    assert g.constraints == ("c1",) and g.crash == "c2" and g.optimum == 0.5998
    assert not g.feasible(FAILED) and get_outcome_problem("linear-crash").feasible({"f": 1})
