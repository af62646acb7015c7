"""What a study optimises and what an objective's return means for it: every return that
cannot be understood raises, naming what was expected; a value that is not finite is a failed
trial saying which one."""

import math

import numpy as np
import pytest

from mfbo.study.objectives import Objectives


def test_make_reads_the_arguments():
    assert Objectives.make().plain
    assert Objectives.make("maximize").directions == ("maximize",)
    two = Objectives.make(directions=["minimize", "maximize"])
    assert (two.k, two.m, two.multi, two.names) == (2, 0, True, None)
    assert list(two.signs) == [1.0, -1.0] and two.labels == ("value_0", "value_1")
    named = Objectives.make(directions={"err": "minimize", "size": "minimize"},
                            constraints=["mem"])
    assert named.names == ("err", "size") and named.constraints == ("mem",)
    assert Objectives.from_config(named.to_config()) == named
    assert Objectives.from_config({"direction": "maximize"}) == Objectives(("maximize",))
    assert Objectives.make().to_config() == {}  # a plain study's journal stays as it was


@pytest.mark.parametrize("kwargs, error, match", [
    ({"direction": "maximize", "directions": ["minimize"]}, ValueError, "not both"),
    ({"directions": []}, ValueError, "at least one"),
    ({"directions": ["up"]}, ValueError, "'minimize' or 'maximize'"),
    ({"directions": "minimize"}, TypeError, "directions must be a list"),
    ({"directions": {"a": "minimize", "": "minimize"}}, TypeError, "non-empty strings"),
    ({"constraints": "mem"}, TypeError, "constraints must be a list"),
    ({"constraints": ["c", "c"]}, ValueError, "twice"),
    ({"constraints": ["loss"]}, ValueError, "cannot name 'loss'"),
    ({"directions": {"a": "minimize"}, "constraints": ["a"]}, ValueError, "both an objective"),
    ({"direction": "up"}, ValueError, "direction must be"),
])
def test_make_refuses_bad_arguments_naming_them(kwargs, error, match):
    with pytest.raises(error, match=match):
        Objectives.make(**kwargs)


TWO = Objectives.make(directions=["minimize", "minimize"])
NAMED = Objectives.make(directions={"err": "minimize", "size": "maximize"},
                        constraints=["mem"])
CONSTRAINED = Objectives.make(constraints=["mem", "time"])


def test_parse_takes_tuples_dicts_and_arrays():
    assert TWO.parse((1, 2.5)) == ("complete", (1.0, 2.5), None, {}, None)
    assert TWO.parse(np.array([1.0, 2.0]))[1] == (1.0, 2.0)
    assert TWO.parse({"loss": [1, 2], "note": "x"}) == ("complete", (1.0, 2.0), None,
                                                         {"note": "x"}, None)
    state, values, cons, extra, error = NAMED.parse(
        {"err": 0.1, "size": 3, "mem": -1, "other": [1, 2]})
    assert (state, values, cons, extra) == ("complete", (0.1, 3.0), (-1.0,), {"other": [1, 2]})
    assert CONSTRAINED.parse({"loss": 2.0, "mem": 0.0, "time": 1.0})[1:3] == ((2.0,),
                                                                           (0.0, 1.0))


@pytest.mark.parametrize("objectives, value, error, match", [
    (Objectives.make(), (1.0, 2.0), TypeError, "pass directions"),
    (TWO, (1.0, 2.0, 3.0), ValueError, "holds 3 values; this study has 2"),
    (TWO, 1.0, TypeError, "expected a tuple of 2 numbers"),
    (TWO, {"x": 1}, ValueError, "without a 'loss' key"),
    (TWO, ("a", 1.0), TypeError, "objective 'value_0' is 'a'"),
    (NAMED, {"err": 1.0, "mem": 0}, ValueError, r"without the objective\(s\) \['size'\]"),
    (NAMED, {"err": 1.0, "size": 2.0}, ValueError, r"without the constraint\(s\) \['mem'\]"),
    (NAMED, (1.0, 2.0), TypeError, "takes a dict holding them"),
    (CONSTRAINED, 1.0, TypeError, "takes a dict holding them"),
    (CONSTRAINED, {"loss": 1.0, "mem": "no", "time": 0}, TypeError, "constraint 'mem'"),
])
def test_returns_that_cannot_be_understood_raise_naming_what_was_expected(
        objectives, value, error, match):
    with pytest.raises(error, match=match):
        objectives.parse(value)


@pytest.mark.parametrize("objectives, value, says", [
    (TWO, (1.0, math.nan), "objective 'value_1' is nan"),
    (TWO, (None, 1.0), "objective 'value_0' is None"),
    (TWO, (10 ** 400, 1.0), "objective 'value_0' is inf"),
    (NAMED, {"err": 1.0, "size": math.inf, "mem": 0}, "objective 'size' is inf"),
    (NAMED, {"err": 1.0, "size": 1.0, "mem": math.nan}, "constraint 'mem' is nan"),
    (CONSTRAINED, {"loss": None, "mem": 0, "time": 0}, "returned None as its 'loss'"),
    (TWO, None, "returned None"),
    (TWO, RuntimeError("boom"), "RuntimeError: boom"),
])
def test_values_that_are_not_finite_are_failed_trials_saying_which(objectives, value, says):
    state, values, cons, extra, error = objectives.parse(value)
    assert (state, values, cons) == ("failed", None, None)
    assert says in error


def test_check_told_refuses_a_damaged_event():
    assert NAMED.check_told([1, 2], [0.5]) == ((1.0, 2.0), (0.5,))
    for values, cons in [([1], [0]), ([1, 2], None), ([1, "x"], [0]), ([1, 2], [math.inf]),
                         ("ab", [0])]:
        with pytest.raises(ValueError):
            NAMED.check_told(values, cons)
    with pytest.raises(ValueError, match="records none"):
        TWO.check_told([1, 2], [0])


def _size_over(r):
    return r["size"] - 2


def test_constraints_as_named_functions_of_the_return():
    named = Objectives.make(directions={"err": "minimize", "size": "minimize"},
                            constraints={"small": _size_over})
    assert named.constraints == ("small",) and named.functions == (_size_over,)
    state, values, cons, extra, _ = named.parse({"err": 0.1, "size": 3, "note": 1})
    assert (state, values, cons, extra) == ("complete", (0.1, 3.0), (1.0,), {"note": 1})
    # a tuple or a number reaches the function as it was returned
    two = Objectives.make(directions=["minimize", "minimize"],
                          constraints={"sum": lambda r: r[0] + r[1] - 1})
    assert two.parse((0.25, 0.5))[2] == (-0.25,)
    one = Objectives.make(constraints={"pos": lambda r: -r})
    assert one.parse(3.0)[1:3] == ((3.0,), (-3.0,))
    # recorded as names: equal to the names read back, functions not compared
    assert Objectives.from_config(named.to_config()) == named
    assert named.to_config()["constraints"] == ["small"]
    # not called for a failed trial; a value that is not finite is a failed trial naming it
    called = []
    nan = Objectives.make(constraints={"c": lambda r: called.append(r) or math.nan})
    assert nan.parse(None)[0] == "failed" and not called
    assert nan.parse(1.0)[4] == "constraint 'c' is nan"


@pytest.mark.parametrize("constraints, error, match", [
    (lambda r: [r["mem"] - 16], TypeError, r"one function.*constraints=\{'name': function"),
    ({"mem": 16}, TypeError, r"constraints\['mem'\] must be a function"),
    ({"mem": None}, TypeError, r"constraints\['mem'\] must be a function"),
    ({"": _size_over}, TypeError, "non-empty strings"),
    ({"loss": _size_over}, ValueError, "cannot name 'loss'"),
])
def test_bad_constraint_functions_are_refused_naming_the_argument(constraints, error, match):
    with pytest.raises(error, match=match):
        Objectives.make(constraints=constraints)


def test_a_function_that_raises_or_gives_no_number_is_refused_naming_the_constraint():
    o = Objectives.make(constraints={"mem": lambda r: r["mem"] - 16, "t": lambda r: "slow"})
    with pytest.raises(ValueError, match=r"constraint 'mem': its function raised KeyError"):
        o.parse({"loss": 1.0})
    with pytest.raises(TypeError, match=r"constraint 't' \(its function's value\)"):
        o.parse({"loss": 1.0, "mem": 3})


def test_a_constraint_function_that_cannot_be_pickled_is_named():
    import pickle

    fine = Objectives.make(constraints={"small": _size_over})
    fine.check_picklable()
    assert pickle.loads(pickle.dumps(fine)).functions == (_size_over,)
    with pytest.raises(TypeError, match="constraint 'late': its function .* cannot be pickled"):
        Objectives.make(constraints={"small": _size_over,
                                     "late": lambda r: 0.0}).check_picklable()
