"""Conditional spaces: conditions, forbidden configurations and steps, checked against exact
enumeration and against each other (a condition on one configuration and on a unit matrix),
with every bad space refused by name."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mfbo import (AllOf, AnyOf, Between, Categorical, Equals, Greater, In, Integer, Less,
                  NotEquals, Ordinal, Real, Relation, Space)
from mfbo.space.candidates import make_candidates


def cash():
    """A model choice with nested, conditional hyper-parameters and a forbidden pair."""
    return Space({
        "model": ["svm", "rf", "knn"],
        "C": Real(1e-3, 1e3, log=True, when={"model": "svm"}),
        "kernel": Categorical(["rbf", "poly", "linear"], when={"model": "svm"}),
        "degree": Integer(2, 5, when={"kernel": "poly"}),
        "gamma": Real(1e-4, 1.0, log=True, when=In("kernel", ["rbf", "poly"])),
        "trees": Integer(10, 500, step=10, when=Equals("model", "rf")),
        "depth": Integer(1, 30, when=AllOf(Equals("model", "rf"), Less("trees", 300))),
        "k": Integer(1, 50, when={"model": "knn"}),
        "p": Ordinal([1, 2, 3], when=Equals("model", "knn") & Greater("k", 5)),
        "lr": Real(0.0, 1.0, step=0.1),
    }, forbidden=[{"kernel": "poly", "degree": 5}, Relation("depth", ">", "trees")])


CASH = cash()


def brute_active(space, params_full):
    """Which names are active for a full assignment, by the definition: in order, a dimension
    is active when it has no condition or its condition holds on the active ones before it."""
    out = {}
    for n, d in space.dimensions.items():
        if d.when is None or d.when.holds(out):
            out[n] = params_full[n]
    return out


def test_inactive_parameters_are_absent_and_the_coordinate_is_one_constant():
    s = cash()
    rng = np.random.default_rng(0)
    U = s.sample(500, rng, "sobol")
    assert s.constrained
    for row, params in zip(U, s.from_unit(U)):
        inactive = [n for n in s.names if n not in params]
        assert all(row[s.names.index(n)] == Space.inactive_unit for n in inactive)
        assert all(0 <= row[s.names.index(n)] <= 1 for n in params)
        assert s.validate(params) == params  # every sampled configuration is valid
    np.testing.assert_array_equal(s.canonical(U), U)  # sampled points are canonical
    np.testing.assert_allclose(s.to_unit(s.from_unit(U)), U, atol=1e-12)


def test_unit_mask_agrees_with_the_configuration_and_the_definition():
    s = cash()
    U = np.random.default_rng(1).random((2000, len(s)))
    active = s.active(U)
    full = s.from_unit(U)  # (active params only)
    for i in range(U.shape[0]):
        every = {n: d.from_unit(U[i, j])[0] for j, (n, d) in enumerate(s.dimensions.items())}
        want = brute_active(s, every)
        assert full[i] == want
        assert [n in want for n in s.names] == active[i].tolist()
    # the forbidden conditions, on the matrix and one configuration at a time
    allowed = s.allowed(s.canonical(U))
    for i in range(0, U.shape[0], 7):
        assert allowed[i] == (not any(f.holds(full[i]) for f in s.forbidden))
    assert not allowed.all() and allowed.any()


@pytest.mark.parametrize("cond", [
    Equals("i", 7), NotEquals("i", 7), In("i", [1, 7, 9]), Less("i", 7), Greater("i", 7),
    Between("i", 3, 7), Equals("o", 2), NotEquals("o", 2), In("o", [1, 3]), Less("o", 2),
    Greater("r", 0.25), Between("r", None, 0.5), Equals("c", "b"), NotEquals("c", "b"),
    In("c", ["a", "c"]), Relation("i", "<", "o"), Relation("i", "==", "o"),
    Relation("c", "!=", "d"), AnyOf(Equals("c", "a"), Less("r", 0.1)) & NotEquals("i", 2)])
def test_each_condition_on_the_unit_matrix_agrees_with_one_configuration(cond):
    s = Space({"i": Integer(0, 9), "o": Ordinal([1, 2, 3]), "r": Real(0.0, 1.0),
               "c": ["a", "b", "c"], "d": ["a", "b", "c"], "x": Real(0.0, 1.0, when=cond)})
    U = np.random.default_rng(0).random((400, len(s)))
    active = s.active(U)[:, -1]
    rows = s.from_unit(U)
    assert [cond.holds(p) for p in rows] == active.tolist() == ["x" in p for p in rows]
    assert 0 < active.sum() < len(rows)


def test_validate_takes_active_parameters_only():
    s = cash()
    ok = {"model": "rf", "trees": 100, "depth": 3, "lr": 0.2}
    assert s.validate(ok) == ok
    # an inactive one as a DataFrame holds it (NaN or None) is dropped
    assert s.validate({**ok, "C": float("nan"), "k": None}) == ok
    with pytest.raises(ValueError, match=r"'C' = 1.0 is given but inactive.*Equals\('model'"):
        s.validate({**ok, "C": 1.0})
    with pytest.raises(ValueError, match=r"missing parameter\(s\) \['depth'\]"):
        s.validate({"model": "rf", "trees": 100, "lr": 0.2})
    with pytest.raises(ValueError, match="forbidden by"):
        s.validate({"model": "svm", "C": 1.0, "kernel": "poly", "degree": 5, "gamma": 0.1,
                    "lr": 0.0})
    with pytest.raises(ValueError, match=r"forbidden by Relation\('depth', '>', 'trees'\)"):
        s.validate({"model": "rf", "trees": 20, "depth": 25, "lr": 0.0})
    # depth is inactive once trees >= 300 (a numeric parent)
    assert s.validate({"model": "rf", "trees": 300, "lr": 0.5}) == {"model": "rf",
                                                                      "trees": 300, "lr": 0.5}


def test_finite_conditional_space_enumerates_each_valid_configuration_once():
    s = Space({"a": ["x", "y"], "b": Integer(0, 3, when={"a": "x"}),
               "c": Categorical([True, False], when=Between("b", 2, None)),
               "d": Ordinal(["lo", "hi"])},
              forbidden=[{"a": "y", "d": "hi"}, AllOf(Equals("b", 3), Equals("c", False))])
    cands = make_candidates(s)
    got = [cands.params(i) for i in range(len(cands))]
    # brute force over full assignments
    want = []
    for a, b, c, d in itertools.product(["x", "y"], range(4), [True, False], ["lo", "hi"]):
        p = brute_active(s, {"a": a, "b": b, "c": c, "d": d})
        if p not in want and not any(f.holds(p) for f in s.forbidden):
            want.append(p)
    key = lambda p: sorted(p.items(), key=str)  # noqa: E731
    assert sorted(map(key, got)) == sorted(map(key, want))
    # a = x: b in {0, 1} (c inactive) x 2 d = 4; b = 2: 2 c x 2 d = 4; b = 3: c = True only x
    # 2 d = 2; a = y: d = lo only = 1
    assert len(got) == len(want) == 11


def test_conditions_and_spaces_round_trip_through_json():
    s = cash()
    again = Space.from_json(s.to_json())
    assert again == s and repr(again) == repr(s)
    assert again.forbidden == s.forbidden
    # an unconditional space's json is what it always was (no when, step or forbidden keys)
    plain = Space({"x": (0.0, 1.0), "n": Integer(1, 3), "c": ["a", "b"]})
    assert plain.to_json() == {"x": {"type": "real", "low": 0.0, "high": 1.0, "log": False},
                               "n": {"type": "integer", "low": 1, "high": 3, "log": False},
                               "c": {"type": "categorical", "choices": ["a", "b"]}}
    for c in (AnyOf(Equals("a", 1), Between("b", None, 2.5)), NotEquals("a", 2),
              Relation("a", ">=", "b")):
        from mfbo.space.conditions import condition_from_json
        assert condition_from_json(c.to_json()) == c


@pytest.mark.parametrize("dims, forbidden, match", [
    ({"a": Integer(0, 3, when={"b": 1}), "b": Integer(0, 3)}, None,
     r"condition of 'a' reads 'b', which is not a dimension defined before it"),
    ({"a": Integer(0, 3, when={"zz": 1})}, None, r"condition of 'a' reads 'zz'"),
    ({"a": ["x", "y"], "b": Real(0, 1, when={"a": "z"})}, None,
     r"condition of 'b'.*'z' is not one of"),
    ({"a": ["x", "y"], "b": Real(0, 1, when=Between("a", 0, 1))}, None,
     r"condition of 'b': Between needs a numeric parent"),
    ({"a": Integer(0, 3), "b": Real(0, 1, when=Between("a", 3, 1))}, None,
     r"never holds \(low > high\)"),
    ({"a": ["x", "y"], "b": Real(0, 1, when=In("a", []))}, None, r"In\('a', \[\]\) never holds"),
    ({"a": ["x", "y"]}, [{"a": ["x", "y"]}], r"forbidden=.*leaves no configuration"),
    ({"a": ["x", "y"]}, [{"b": "x"}], r"forbidden\[0\] reads 'b'"),
    ({"a": (0.0, 1.0), "b": (0.0, 1.0)}, [Relation("a", "<=", "b"), Relation("a", ">", "b")],
     r"leaves no configuration.*none of 10,000 random"),
    ({"a": ["x", "y"], "b": (0.0, 1.0)}, [Relation("a", "<", "b")],
     r"Relation '<' needs two numeric"),
])
def test_bad_conditional_spaces_are_refused_by_name(dims, forbidden, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Space(dims, forbidden=forbidden)


def test_bad_conditions_and_steps_are_refused():
    with pytest.raises(TypeError, match="a condition must be a Condition"):
        Real(0, 1, when="a == 1")
    with pytest.raises(ValueError, match="Real step=0.3 does not divide the range"):
        Real(0.0, 1.0, step=0.3)
    with pytest.raises(ValueError, match="Real takes log=True or a step"):
        Real(1.0, 10.0, log=True, step=1.0)
    with pytest.raises(ValueError, match="Integer step=3 does not divide the range"):
        Integer(0, 10, step=3)
    with pytest.raises(ValueError, match="Integer takes log=True or a step > 1"):
        Integer(1, 9, log=True, step=2)
    with pytest.raises(TypeError, match="Integer step must be an int"):
        Integer(0, 10, step=2.5)
    with pytest.raises(ValueError, match="step must be > 0"):
        Real(0.0, 1.0, step=0.0)
    with pytest.raises(TypeError, match="forbidden must be a list"):
        Space({"a": (0.0, 1.0)}, forbidden={"a": 1})
    with pytest.raises(ValueError, match="Relation op"):
        Relation("a", "=~", "b")


def test_steps_hold_their_grid_exactly():
    r = Real(0.0, 1.0, step=0.1)
    assert r.levels == 11
    values = r.from_unit((np.arange(11) + 0.5) / 11)
    assert values == [round(0.1 * i, 10) for i in range(11)]  # 0.3, not 0.30000000000000004
    assert r.validate("r", 0.30000000000000004) == 0.3
    with pytest.raises(ValueError, match="is not one of the values 0.0 \\+ k \\* 0.1"):
        r.validate("r", 0.25)
    i = Integer(10, 500, step=10)
    assert i.levels == 50 and i.from_unit([0.0, 1.0]) == [10, 500]
    np.testing.assert_allclose(i.to_unit([10, 500]), [0.5 / 50, 49.5 / 50])
    with pytest.raises(ValueError, match="not one of the values 10 \\+ k \\* 10"):
        i.validate("i", 15)
    s = Space({"r": r, "i": i})
    rows = s.from_unit(s.sample(200, np.random.default_rng(0)))
    assert all(p["i"] % 10 == 0 and abs(p["r"] * 10 - round(p["r"] * 10)) < 1e-12 for p in rows)
    # numeric candidates go through validation, so an off-grid one is refused by name
    with pytest.raises(ValueError, match="'i' = 15"):
        s.array_to_unit(np.array([[0.1, 15]]))
    assert not math.isnan(s.array_to_unit(np.array([[0.1, 20]]))[0, 0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=10, max_size=10), st.integers(0, 2))
def test_canonical_is_idempotent_and_keeps_the_configuration(row, _):
    s = CASH
    u = np.array(row)
    c = s.canonical(u)
    np.testing.assert_array_equal(s.canonical(c), c)
    assert s.from_unit(c) == s.from_unit(u)
    params = s.from_unit(u)[0]
    if s.allowed(c)[0]:
        assert s.validate(params) == params
        np.testing.assert_allclose(s.to_unit([params]), s.canonical(
            s.to_unit([params])), atol=0)
    else:
        with pytest.raises(ValueError, match="forbidden"):
            s.validate(params)


def test_map_leaves_replaces_each_leaf_and_keeps_the_combinations():
    from mfbo.space import AllOf, AnyOf, Equals, In, Less
    cond = AllOf(Equals("a", 1), AnyOf(In("b", [1, 2]), Less("c", 3)))
    seen = []

    def rename(leaf):
        seen.append(leaf)
        return _renamed(leaf)

    def _renamed(leaf):
        import copy
        out = copy.copy(leaf)
        out.name = leaf.name.upper()
        return out

    out = cond.map_leaves(rename)
    assert out == AllOf(Equals("A", 1), AnyOf(In("B", [1, 2]), Less("C", 3)))
    assert seen == [Equals("a", 1), In("b", [1, 2]), Less("c", 3)]
    assert cond == AllOf(Equals("a", 1), AnyOf(In("b", [1, 2]), Less("c", 3)))  # unchanged
    assert Equals("a", 1).map_leaves(_renamed) == Equals("A", 1)


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True),
                    st.sampled_from(["a", "b", "1", "True", ""]),
                    st.integers(-3, 3).map(np.int64), st.floats(-2, 2).map(np.float64),
                    st.sampled_from([np.bool_(True), np.str_("a"), float("nan"), 1.0, 0.0]))


@settings(max_examples=300, deadline=None)
@given(value=_VALUES, given_=_VALUES, others=st.lists(_VALUES, min_size=1, max_size=4))
def test_a_leaf_holds_for_one_value_as_its_array_test_says(value, given_, others):
    for cond in (Equals("p", value), NotEquals("p", value), In("p", [value, *others])):
        by_array = bool(cond._test_values(np.array([given_], dtype=object))[0])
        assert cond.holds({"p": given_}) == by_array
        assert not cond.holds({"q": given_})
