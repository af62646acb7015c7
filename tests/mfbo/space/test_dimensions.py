"""The dimensions: integers and reals of extreme ranges, names, bools and lists refused,
categorical NaN; and the Ordinal dimension (values in a meaningful order, encoded like a
categorical, searched as an ordered coordinate)."""

import math

import numpy as np
import pytest

import mfbo
from mfbo import Categorical, Integer, Optimizer, Ordinal, Real, Space
from mfbo.storage import SQLiteStorage


WIDE_INTEGERS = [Integer(10**17, 10**17 + 10), Integer(-2**63, 2**63 - 1), Integer(0, 2**62),
                 Integer(2**62, 2**62 + 2**52), Integer(-5, 2**50), Integer(1, 2**62, log=True),
                 Integer(2**40, 2**63 - 1, log=True)]


def _unit_points(rng, n=2000):
    """Random unit coordinates with the ends and their neighbours."""
    ends = [0.0, 1.0, np.nextafter(1.0, 0.0), np.nextafter(0.0, 1.0), 0.5, 0.49999999999999994]
    return np.concatenate([ends, rng.random(n)])


@pytest.mark.parametrize("dim", WIDE_INTEGERS, ids=repr)
def test_integer_of_a_wide_range_decodes_to_exact_ints_inside_it(dim):
    values = dim.from_unit(_unit_points(np.random.default_rng(0)))
    assert all(type(v) is int and dim.low <= v <= dim.high for v in values)
    assert dim.from_unit([0.0]) == [dim.low] and dim.from_unit([1.0]) == [dim.high]
    for v in values:  # every decoded value is a value of the dimension
        assert dim.validate("n", v) == v


@pytest.mark.parametrize("dim", WIDE_INTEGERS, ids=repr)
def test_integer_round_trip_through_the_unit_coordinate(dim):
    rng = np.random.default_rng(1)
    width = dim.high - dim.low
    values = [dim.low, dim.low + 1, dim.high - 1, dim.high,
              *(dim.low + int(rng.integers(0, 2**62)) % (width + 1) for _ in range(300))]
    U = dim.to_unit(values)
    assert np.all((U >= 0) & (U <= 1))
    back = dim.from_unit(U)
    if not dim.log and width < 2**53:
        assert back == values
    else:
        # a float in [0, 1] tells apart 2**53 points near 1 (and log spacing at most as
        # finely): the round trip is exact up to that resolution, exact for small offsets
        for v, b in zip(values, back):
            assert dim.low <= b <= dim.high
            assert abs(b - v) <= max(1, abs(v) * 2**-44 if dim.log else width * 2**-52)
        assert dim.from_unit(dim.to_unit([dim.low + 1])) == [dim.low + 1]


def test_integer_validate_accepts_exactly_the_ints_in_range():
    dim = Integer(10**17, 10**17 + 10)
    for v in (10**17, 10**17 + 5, 10**17 + 10, np.int64(10**17 + 3)):
        assert dim.validate("n", v) == int(v) and type(dim.validate("n", v)) is int
    for v in (10**17 - 1, 10**17 + 11, 10**17 + 16):
        with pytest.raises(ValueError, match="'n'"):
            dim.validate("n", v)
    # float(10**17 + 10) is 10**17 + 16: a float that is an integer is that integer
    with pytest.raises(ValueError, match="'n'"):
        dim.validate("n", float(10**17 + 10))
    assert dim.validate("n", 1e17) == 10**17
    full = Integer(-2**63, 2**63 - 1)
    assert full.validate("n", 2**63 - 1) == 2**63 - 1 and full.validate("n", -2**63) == -2**63
    with pytest.raises(ValueError, match="'n'"):
        full.validate("n", 2**63)


def test_wide_integer_encodings():
    # up to 2**50 values: an ordinal of levels, as before; wider: a continuous coordinate
    assert Integer(0, 2**50 - 1).levels == 2**50 and Integer(0, 2**50).levels == 0
    assert Integer(1, 2**62, log=True).levels == 0
    s = Space({"n": Integer(10**17, 10**17 + 10), "m": Integer(-2**63, 2**63 - 1),
               "k": Integer(2**60, 2**60 + 2**52)})
    rows = [{"n": 10**17 + 7, "m": 2**63 - 1, "k": 2**60 + 2**52 - 1},
            {"n": 10**17, "m": -2**63, "k": 2**60 + 3}]
    assert s.from_unit(s.to_unit(rows)) == rows
    X = np.array([[10**17 + 7, 0, 2**60 + 12345]], dtype=np.int64)
    assert s.from_unit(s.array_to_unit(X)) == [{"n": 10**17 + 7, "m": 0, "k": 2**60 + 12345}]
    with pytest.raises(ValueError, match="'n'"):
        s.array_to_unit(np.array([[10**17 + 11, 0, 2**60]], dtype=np.int64))


@pytest.mark.parametrize("dim", [Real(1e307, 1.7e308), Real(-1.7e308, -1e307),
                                 Real(5e-324, 1e-323), Real(1e-320, 1e308, log=True),
                                 Real(5e-324, 1.7e308, log=True), Real(1.0, 1.0 + 2**-52),
                                 Real(-1e-310, 1e-310), Real(1e300, 1.0000000000000002e300)],
                         ids=repr)
def test_real_of_an_extreme_range_decodes_inside_it(dim):
    values = dim.from_unit(_unit_points(np.random.default_rng(2)))
    assert all(dim.low <= v <= dim.high for v in values)
    assert dim.from_unit([0.0]) == [dim.low] and dim.from_unit([1.0]) == [dim.high]
    U = dim.to_unit(values)
    assert np.all((U >= 0) & (U <= 1))
    for v in dim.from_unit(U):
        dim.validate("x", v)


def test_optimizer_on_integers_near_1e17_proposes_values_inside_the_range():
    import mfbo

    dim = Integer(10**17, 10**17 + 10)
    opt = mfbo.Optimizer({"n": dim}, random_state=0)
    seen = []
    for _ in range(11):  # a finite space: every value once
        t = opt.ask()
        assert dim.low <= t.params["n"] <= dim.high
        seen.append(t.params["n"])
        opt.tell(t, float((t.params["n"] - 10**17 - 4) ** 2))
    assert sorted(seen) == list(range(dim.low, dim.high + 1))
    with pytest.raises(mfbo.StudyExhausted):
        opt.ask()
    opt = mfbo.Optimizer({"n": dim, "x": Real(0.0, 1.0), "m": Integer(0, 2**62),
                          "k": Integer(1, 2**62, log=True)}, random_state=0)
    for _ in range(30):
        t = opt.ask()
        p = t.params
        assert dim.low <= p["n"] <= dim.high and 0 <= p["m"] <= 2**62
        assert 1 <= p["k"] <= 2**62 and type(p["k"]) is int
        opt.tell(t, float((p["n"] - 10**17 - 4) ** 2 + p["x"] + p["m"] / 2**62))
    assert opt.study.n_finished == 30


@pytest.mark.parametrize("name", ["\ufb01le", "e\u0301t\u00e9", "\u210cx", "\uff41", "\u212b"])
def test_names_that_python_normalises_are_refused(name):
    """Python reads identifiers in source NFKC-normalised, so ``def f(file)`` has no parameter
    named ``"\ufb01le"``: ``f(**params)`` could never be called with such a name."""
    import unicodedata

    normal = unicodedata.normalize("NFKC", name)
    with pytest.raises(ValueError) as info:
        Space({name: (0.0, 1.0)})
    assert repr(name) in str(info.value) and repr(normal) in str(info.value)


@pytest.mark.parametrize("name", ["", 3, None, ("a",), "1a", "a-b"])
def test_names_that_are_not_identifiers_are_refused(name):
    with pytest.raises((TypeError, ValueError), match="identifier"):
        Space({name: (0.0, 1.0)})


def test_names_already_normal_are_kept():
    s = Space({"\u00e9t\u00e9": (0.0, 1.0), "\u03bb": Integer(0, 3), "_x1": ["a"]})
    assert s.names == ["\u00e9t\u00e9", "\u03bb", "_x1"]


def test_encoding_values_and_json():
    s = Space({"size": Ordinal(["S", "M", "L"]), "c": Categorical(["S", "M", "L"])})
    assert list(s.levels) == [3, -3]  # ordered vs unordered, same encoding
    U = s.to_unit([{"size": "L", "c": "L"}])
    assert np.allclose(U, [[5 / 6, 5 / 6]])
    assert s.from_unit(U) == [{"size": "L", "c": "L"}]
    assert Space.from_json(s.to_json()) == s
    assert s.dimensions["size"] != Categorical(["S", "M", "L"])
    assert repr(s.dimensions["size"]) == "Ordinal(['S', 'M', 'L'])"
    with pytest.raises(ValueError, match="'size'"):
        s.validate({"size": "XL", "c": "S"})
    with pytest.raises(ValueError, match="distinct"):
        Ordinal([1, 1])


def test_optimizer_over_an_ordinal_and_resume(tmp_path):
    space = {"x": (0.0, 1.0), "size": Ordinal([1, 2, 4, 8, 16])}
    db = str(tmp_path / "s.db")
    r = mfbo.minimize(lambda x, size: x + abs(size - 4), space, n_calls=15, random_state=0,
                      progress_bar=False, storage=db)
    assert all(t.params["size"] in (1, 2, 4, 8, 16) for t in r.trials)
    again = mfbo.Optimizer(space, storage=SQLiteStorage(db))  # the stored space matches
    assert again.n_finished == 15


def test_infinite_width_real_is_refused():
    with pytest.raises(ValueError, match="finite width"):
        Real(-1e308, 1e308)
    Real(-1e307, 1e307)  # wide but representable


def test_categorical_nan_is_one_choice():
    with pytest.raises(ValueError, match="distinct"):
        Categorical([float("nan"), float("nan")])
    space = {"c": Categorical([float("nan"), 1.0])}
    opt = Optimizer(space, random_state=0)
    t = opt.tell({"c": float("nan")}, 1.0)
    assert math.isnan(t.params["c"])
    (last,) = opt.ask(1)
    assert last.params["c"] == 1.0
    with pytest.raises(mfbo.StudyExhausted):
        opt.ask()


def test_integer_refuses_bools_and_lists_get_a_clear_message():
    space = {"i": Integer(0, 5), "c": Categorical(["a", "b"])}
    opt = Optimizer(space, random_state=0)
    with pytest.raises(TypeError, match="'i' must be an integer"):
        opt.tell({"i": True, "c": "a"}, 1.0)
    with pytest.raises(ValueError, match="'c' = \\[1, 2\\] is not one of"):
        opt.tell({"i": 1, "c": [1, 2]}, 1.0)
    with pytest.raises(TypeError, match="booleans"):
        Optimizer({"i": Integer(0, 1), "j": Integer(0, 1)},
                  candidates=np.array([[True, False], [False, True]]))
    assert opt.n_trials == 0


def test_integer_with_more_values_than_a_float_resolves_stays_inside_its_range():
    # once refused (more than 2**53 values); now a continuous coordinate decoded exactly
    dim = Integer(-2**62, 2**62)
    values = dim.from_unit(np.linspace(0, 1, 101))
    assert all(isinstance(v, int) and -2**62 <= v <= 2**62 for v in values)
    assert values[0] == -2**62 and values[-1] == 2**62
