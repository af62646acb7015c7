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


# -- integers and reals of extreme ranges ---------------------------------------------------------

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
