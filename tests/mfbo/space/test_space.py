"""The Space: round trips through the unit cube, sampling, bad parameters and bad spaces."""

import numpy as np
import pytest

from mfbo import Categorical, Integer, Real, Space


def make():
    return Space({"lr": Real(1e-4, 1e-1, log=True), "x": (-2.0, 3.0), "n": Integer(1, 4),
                  "act": Categorical(["relu", "tanh", None]), "k": (2, 5)})


def test_round_trip_and_encoding():
    s = make()
    assert isinstance(s.dimensions["x"], Real) and isinstance(s.dimensions["k"], Integer)
    assert list(s.levels) == [0, 0, 4, -3, 4]
    rows = [{"lr": 1e-3, "x": 0.5, "n": 3, "act": None, "k": 5},
            {"lr": 1e-1, "x": -2.0, "n": 1, "act": "relu", "k": 2}]
    U = s.to_unit(rows)
    assert U.min() >= 0 and U.max() <= 1
    back = s.from_unit(U)
    assert back[0]["n"] == 3 and back[0]["act"] is None and back[1]["act"] == "relu"
    assert back[0]["lr"] == pytest.approx(1e-3) and back[1]["x"] == pytest.approx(-2.0)
    assert Space.from_json(s.to_json()) == s


def test_sampled_points_are_valid():
    s = make()
    for kind in ("random", "sobol", "lhs"):
        for p in s.from_unit(s.sample(20, np.random.default_rng(0), kind)):
            s.validate(p)


@pytest.mark.parametrize("bad, exc, match", [
    ({"lr": 1e-3, "x": 0.5, "n": 3, "act": None}, ValueError, "missing"),
    ({"lr": 1e-3, "x": 0.5, "n": 3, "act": None, "k": 2, "zz": 1}, ValueError, "unknown"),
    ({"lr": 1e-3, "x": 9.0, "n": 3, "act": None, "k": 2}, ValueError, "'x'"),
    ({"lr": 1e-3, "x": 0.5, "n": 2.5, "act": None, "k": 2}, TypeError, "'n'"),
    ({"lr": 1e-3, "x": "a", "n": 2, "act": None, "k": 2}, TypeError, "'x'"),
    ({"lr": 1e-3, "x": 0.5, "n": 2, "act": "elu", "k": 2}, ValueError, "'act'"),
])
def test_bad_params(bad, exc, match):
    with pytest.raises(exc, match=match):
        make().validate(bad)


@pytest.mark.parametrize("spec, match", [
    (lambda: {"a": (1.0, 0.0)}, "low < high"), (lambda: {"a": Real(0.0, 1.0, log=True)}, "low > 0"),
    (lambda: {}, "at least one"), (lambda: {"a b": (0.0, 1.0)}, "identifiers"),
    (lambda: {"a": "x"}, "dimension 'a'"), (lambda: {"a": Categorical([1, 1])}, "distinct"),
    (lambda: {"a": (0.0, float("inf"))}, "finite"),
])
def test_bad_spaces(spec, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Space(spec())


def test_conditional_counts_conditional_parameters_not_forbidden_configurations():
    from mfbo.space import Greater

    cond = {"kind": Categorical(["a", "b"]), "x": Real(0.0, 1.0, when={"kind": "a"})}
    assert Space(cond).conditional
    flat = {"kind": Categorical(["a", "b"]), "x": Real(0.0, 1.0)}
    assert not Space(flat).conditional
    assert not Space(flat, forbidden=[Greater("x", 0.9)]).conditional
