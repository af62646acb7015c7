"""Functional ANOVA (mfbo.results.importance): the estimators against exact decompositions, and the
importance of a Mondrian forest fitted to an additive function."""

import numpy as np
import pytest

import mfbo
from mfbo import Categorical, Integer, Ordinal, Real, Space
from mfbo.results.importance import MAX_EXACT, functional_anova
from mfbo.results.surface import fit_forest, mean_function
from tests.support import run_trials

CUBE = Space({"x0": (0.0, 1.0), "x1": (0.0, 1.0), "x2": (0.0, 1.0)})


def additive(U):
    return 10.0 * U[:, 0] + 1.0 * U[:, 1]


def test_sobol_estimate_matches_the_exact_decomposition_of_an_additive_function():
    # uniform u: Var(10 u0) = 100/12, Var(u1) = 1/12, u2 unused
    imp = functional_anova(additive, CUBE, pairs=True, n_samples=4096)
    assert imp.method == "sobol" and imp.n_evaluations == 4096 * (2 + 3 + 3)
    assert imp.variance == pytest.approx(101 / 12, rel=1e-3)
    assert imp.main["x0"] == pytest.approx(100 / 101, abs=2e-3)
    assert imp.main["x1"] == pytest.approx(1 / 101, abs=2e-3)
    assert imp.main["x2"] == 0.0  # the column swap changes nothing
    assert all(abs(v) < 2e-3 for v in imp.pairs.values())
    assert [n for n, _ in imp.ranked()] == ["x0", "x1", "x2"]


def test_sobol_pair_effect_of_a_product():
    # f = u0 u1: V = 1/9 - 1/16 = 7/144, V_0 = V_1 = Var(u/2) = 3/144, V_01 = 1/144
    imp = functional_anova(lambda U: U[:, 0] * U[:, 1], CUBE, pairs=True, n_samples=8192)
    assert imp.main["x0"] == pytest.approx(3 / 7, abs=0.01)
    assert imp.main["x1"] == pytest.approx(3 / 7, abs=0.01)
    assert imp.pairs[("x0", "x1")] == pytest.approx(1 / 7, abs=0.01)
    assert abs(imp.pairs[("x0", "x2")]) < 0.01 and abs(imp.main["x2"]) < 1e-12


def test_exact_enumeration_of_a_finite_space():
    space = Space({"i": Integer(0, 3), "c": Categorical(["a", "b", "c"]),
                   "o": Ordinal(["lo", "hi"])})
    grid = np.arange(4), np.arange(3), np.arange(2)

    def f(U):  # 2 i + [0, 1, 5][c] + i * o, from the level centres
        i, c, o = (np.floor(U[:, d] * k).astype(int) for d, k in enumerate((4, 3, 2)))
        return 2.0 * i + np.array([0.0, 1.0, 5.0])[c] + i * o

    imp = functional_anova(f, space, pairs=True)
    assert imp.method == "exact" and imp.n_evaluations == 24
    F = (2.0 * grid[0][:, None, None] + np.array([0.0, 1.0, 5.0])[None, :, None]
         + grid[0][:, None, None] * grid[2][None, None, :])
    V = F.var()
    fi = F.mean(axis=(1, 2)) - F.mean()
    fo = F.mean(axis=(0, 1)) - F.mean()
    fio = F.mean(axis=1) - F.mean() - fi[:, None] - fo[None, :]
    assert imp.variance == pytest.approx(V)
    assert imp.main["i"] == pytest.approx(np.mean(fi ** 2) / V)
    assert imp.main["o"] == pytest.approx(np.mean(fo ** 2) / V)
    assert imp.pairs[("i", "o")] == pytest.approx(np.mean(fio ** 2) / V)
    assert imp.pairs[("i", "c")] == pytest.approx(0.0, abs=1e-12)
    total = sum(imp.main.values()) + sum(imp.pairs.values())
    assert total == pytest.approx(1.0)  # no three-way effect here


def test_constant_surface_and_constant_dimension():
    space = Space({"x": (0.0, 1.0), "k": Categorical(["only"])})
    imp = functional_anova(lambda U: np.full(U.shape[0], 3.0), space, n_samples=64)
    assert imp.variance == pytest.approx(0.0, abs=1e-20)
    assert imp.main == {"x": 0.0, "k": 0.0}
    imp = functional_anova(lambda U: U[:, 0], space, n_samples=1024)
    assert imp.main["k"] == 0.0 and imp.main["x"] == pytest.approx(1.0, abs=1e-3)


def test_log_dimension_is_decomposed_in_its_search_coordinate():
    # uniform in log10(x) on [1e-3, 1]: f = log10(x) is linear in the coordinate
    space = Space({"x": Real(1e-3, 1.0, log=True), "y": (0.0, 1.0)})
    imp = functional_anova(lambda U: 3.0 * U[:, 0] + U[:, 1], space, n_samples=2048)
    assert imp.main["x"] == pytest.approx(9 / 10, abs=2e-3)


def _random_trials(space, f, n, seed):
    opt = mfbo.Optimizer(space, surrogate="random", random_state=seed)
    return run_trials(opt, f, n).result()


@pytest.mark.parametrize("seed", [0, 1])
def test_forest_importance_of_an_additive_function_ranks_the_dimensions(seed):
    r = _random_trials(CUBE, lambda x0, x1, x2: 10 * x0 + 1 * x1, 100, seed)
    imp = r.importance(random_state=seed)
    assert imp.method == "sobol"
    assert imp.main["x0"] > imp.main["x1"] > imp.main["x2"]
    assert imp.main["x0"] > 0.9 and abs(imp.main["x2"]) < 0.02


def test_exact_and_sobol_agree_on_the_same_forest():
    space = Space({"x0": Integer(0, 9), "x1": Integer(0, 9), "x2": Integer(0, 9)})
    r = _random_trials(space, lambda x0, x1, x2: 10 * x0 + 1 * x1, 120, 0)
    f = mean_function(fit_forest(r, random_state=0))
    exact = functional_anova(f, space, pairs=True, method="exact")
    mc = functional_anova(f, space, pairs=True, method="sobol", n_samples=8192)
    assert exact.method == "exact" and exact.n_evaluations == 1000
    assert exact.variance == pytest.approx(mc.variance, rel=0.02)
    for n in space.names:
        assert mc.main[n] == pytest.approx(exact.main[n], abs=0.005)
    for k in exact.pairs:
        assert mc.pairs[k] == pytest.approx(exact.pairs[k], abs=0.005)
    assert exact.main["x0"] > exact.main["x1"] > exact.main["x2"]
    assert exact.main["x2"] < 0.02


def test_the_optimizers_model_can_be_decomposed():
    opt = mfbo.Optimizer(CUBE, random_state=0, n_initial=8)
    for _ in range(12):
        t = opt.ask()
        opt.tell(t, 10 * t.params["x0"] + t.params["x1"])
    imp = opt.result().importance(model=opt.model, n_samples=512)
    assert max(imp.main, key=imp.main.get) == "x0"


def test_bad_input_is_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="method"):
        functional_anova(additive, CUBE, method="anova")
    with pytest.raises(ValueError, match="n_samples"):
        functional_anova(additive, CUBE, n_samples=0)
    with pytest.raises(ValueError, match="method='exact'.*continuous"):
        functional_anova(additive, CUBE, method="exact")
    big = Space({f"d{i}": Integer(0, 99) for i in range(3)})
    assert 100 ** 3 > MAX_EXACT
    with pytest.raises(ValueError, match="1000000 points"):
        functional_anova(lambda U: U[:, 0], big, method="exact")
    with pytest.raises(ValueError, match="non-finite"):
        functional_anova(lambda U: np.full(U.shape[0], np.nan), CUBE, n_samples=8)
    with pytest.raises(TypeError, match="model"):
        mean_function(object())
    r = _random_trials(CUBE, lambda x0, x1, x2: x0, 3, 0)
    opt = mfbo.Optimizer(CUBE, surrogate="random")
    with pytest.raises(ValueError, match="random search"):
        r.importance(model=opt.model)
    fresh = mfbo.Optimizer(CUBE)
    with pytest.raises(ValueError, match="no observation"):
        r.importance(model=fresh.model)
    empty = mfbo.Optimizer(CUBE).result()
    with pytest.raises(ValueError, match="no complete trial"):
        empty.importance()


@pytest.mark.parametrize("scale", [1e300, 1.7e308 / 12], ids=["1e300", "near max"])
def test_huge_surfaces_have_the_fractions_of_ordinary_ones(scale):
    """The fractions are scale-free: a surface times 1e300 (whose variance overflows float64)
    has those of the surface itself, finite; its variance is inf, the nearest float64."""
    def f(U):  # at most 12
        return 10.0 * U[:, 0] + U[:, 1] + U[:, 0] * U[:, 2]

    space = Space({"i": Integer(0, 5), "c": Categorical(["a", "b", "c"])})

    def g(U):  # a finite space: the exact decomposition
        return U[:, 0] * 3 + (U[:, 1] > 0.5) + U[:, 0] * U[:, 1]

    for fun, sp in ((f, CUBE), (g, space)):
        one = functional_anova(fun, sp, pairs=True, n_samples=512)
        big = functional_anova(lambda U: scale * fun(U), sp, pairs=True, n_samples=512)
        assert big.method == one.method
        for name in one.main:
            assert big.main[name] == pytest.approx(one.main[name], rel=1e-9, abs=1e-12)
        for pair in one.pairs:
            assert big.pairs[pair] == pytest.approx(one.pairs[pair], rel=1e-9, abs=1e-12)
        assert big.variance == np.inf


def test_importance_of_losses_near_the_float_maximum():
    """Losses of +-1e308 (a forest fitted to them predicts finite means): finite fractions
    that rank the dimensions as for ordinary losses."""
    r = _random_trials(CUBE, lambda x0, x1, x2: 1e308 * (2 * x0 - 1) + 1e307 * x1, 100, 0)
    imp = r.importance(n_samples=512)
    assert all(np.isfinite(v) for v in imp.main.values())
    assert imp.main["x0"] > imp.main["x1"] > imp.main["x2"]
    assert imp.main["x0"] > 0.9
