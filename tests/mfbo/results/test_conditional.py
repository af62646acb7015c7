"""Results of a conditional study: the DataFrame, partial dependence, importance and figures
computed over the configurations where a dimension is active, against expectations worked
out by hand on small spaces."""

import math

import numpy as np
import pytest
from matplotlib.figure import Figure

import mfbo
from mfbo import Categorical, Integer, OptimizeResult, Real, Space, Trial
from mfbo.results.dependence import partial_dependence
from mfbo.results.importance import functional_anova
from mfbo.results.surface import search_sample

#: a branch ``a`` with a continuous child ``x`` and a nested child ``deg`` (under
#: kernel ``p``), a branch ``b`` with ``k``, whose value 4 is forbidden
SPACE = Space({"model": ["a", "b"],
               "x": Real(0.0, 1.0, when={"model": "a"}),
               "kernel": Categorical(["r", "p"], when={"model": "a"}),
               "deg": Integer(1, 3, when={"kernel": "p"}),
               "k": Integer(1, 4, when={"model": "b"})},
              forbidden=[{"model": "b", "k": 4}])


def loss(model, x=None, kernel=None, deg=None, k=None):
    if model == "a":
        return 10.0 * x + (deg if kernel == "p" else 0.0)
    return 100.0 + k ** 2


def surface(space, f):
    """``f(**params)`` as a function of unit rows, refusing any row that is not a canonical,
    allowed configuration (a model is never asked about another)."""
    def mean(U):
        assert np.array_equal(space.canonical(U), U), "a non-canonical point was evaluated"
        assert space.allowed(U).all(), "a forbidden point was evaluated"
        return np.array([f(**p) for p in space.from_unit(U)])
    return mean


@pytest.fixture(scope="module")
def sample():
    return search_sample(SPACE, 64, np.random.default_rng(0))


def _latent(sample):
    """The values the sample's rows hold for every dimension, active or not."""
    return {n: np.array(d.from_unit(sample[:, i]), dtype=object)
            for i, (n, d) in enumerate(SPACE.dimensions.items())}


def test_partial_dependence_of_a_child_is_that_of_its_branch(sample):
    f = surface(SPACE, loss)
    values = _latent(sample)
    in_a = values["model"] == "a"
    pd = partial_dependence(f, SPACE, "x", n_points=5, sample=sample)
    # over the rows of branch a only: slope 10 (the other branch would halve it) and the
    # level of that branch's other terms
    rest = np.mean([d if kern == "p" else 0.0
                    for kern, d in zip(values["kernel"][in_a], values["deg"][in_a])])
    np.testing.assert_allclose(pd.mean, 10.0 * np.array(pd.values[0]) + rest)
    assert list(pd.counts) == [in_a.sum()] * 5 and pd.n_samples == 64
    # a nested child: the rows of branch a with kernel p
    pd = partial_dependence(f, SPACE, "deg", sample=sample)
    poly = in_a & (values["kernel"] == "p")
    assert pd.values[0] == [1, 2, 3] and list(pd.counts) == [poly.sum()] * 3
    x = sample[poly, 1]
    np.testing.assert_allclose(pd.mean, 10.0 * x.mean() + np.array([1.0, 2.0, 3.0]))


def test_a_forbidden_value_is_left_out_not_averaged(sample):
    f = surface(SPACE, loss)
    values = _latent(sample)
    pd = partial_dependence(f, SPACE, "k", sample=sample)
    in_b = (values["model"] == "b").sum()
    assert pd.values[0] == [1, 2, 3, 4] and list(pd.counts) == [in_b] * 3 + [0]
    np.testing.assert_array_equal(pd.mean[:3], [101.0, 104.0, 109.0])
    assert math.isnan(pd.mean[3])
    # the parent: at b every row is in branch b, except those whose own k is 4
    pd = partial_dependence(f, SPACE, "model", sample=sample)
    k = values["k"].astype(int)
    a = 10.0 * sample[:, 1] + np.where(values["kernel"] == "p", values["deg"], 0).astype(float)
    np.testing.assert_allclose(pd.mean, [a.mean(), np.mean(100.0 + k[k != 4] ** 2)])
    assert list(pd.counts) == [64, (k != 4).sum()]


def test_pairs_are_averaged_where_both_are_active(sample):
    f = surface(SPACE, loss)
    values = _latent(sample)
    pd = partial_dependence(f, SPACE, ("model", "x"), n_points=3, sample=sample)
    assert pd.mean.shape == (2, 3)
    # model a puts every row in branch a, with its own kernel and deg
    rest = np.mean(np.where(values["kernel"] == "p", values["deg"], 0).astype(float))
    np.testing.assert_allclose(pd.mean[0], 10.0 * np.array([0.0, 0.5, 1.0]) + rest)
    assert list(pd.counts[0]) == [64] * 3
    assert np.isnan(pd.mean[1]).all() and not pd.counts[1].any()  # x inactive under b
    never = partial_dependence(f, SPACE, ("x", "k"), n_points=3, sample=sample)
    assert np.isnan(never.mean).all() and not never.counts.any()


def test_partial_dependence_refuses_a_sample_outside_the_cube(sample):
    with pytest.raises(ValueError, match="sample must lie in the unit cube"):
        partial_dependence(surface(SPACE, loss), SPACE, "x",
                           sample=SPACE.canonical(sample))  # inactive coordinates at -0.5


#: a finite conditional space: its importance is enumerated exactly
FINITE = Space({"model": ["a", "b"],
                "kernel": Categorical(["r", "p"], when={"model": "a"}),
                "deg": Integer(1, 3, when={"kernel": "p"}),
                "k": Integer(1, 4, when={"model": "b"}),
                "z": Integer(0, 1)})


def additive(model, z, kernel=None, deg=None, k=None):
    """One term per dimension, each where it is active."""
    if model == "a":
        return 2.0 * (kernel == "p") + (deg or 0)
    return 5.0 + k


def with_interaction(model, z, kernel=None, deg=None, k=None):
    return additive(model, z, kernel, deg, k) + (k * z if model == "b" else 0.0)


def test_exact_importance_of_one_term_per_active_dimension():
    # by hand, under P(a) = P(b) = 1/2, P(p | a) = 1/2 and uniform deg, k, z:
    # E[f | a] = 2, E[f | b] = 7.5: V_model = 5.5^2 / 4; in a, E[f | kernel] is 0 or 4 (variance
    # 4, share 1/2); in a & p, Var(deg) = 2/3 (share 1/4); in b, Var(k) = 5/4 (share 1/2)
    parts = {"model": 5.5 ** 2 / 4, "kernel": 4 / 2, "deg": (2 / 3) / 4, "k": (5 / 4) / 2,
             "z": 0.0}
    V = sum(parts.values())
    imp = functional_anova(surface(FINITE, additive), FINITE, pairs=True)
    assert imp.method == "exact" and imp.variance == pytest.approx(V)
    assert imp.main == pytest.approx({n: v / V for n, v in parts.items()}, abs=1e-12)
    assert sum(imp.main.values()) == pytest.approx(1.0)  # no dilution, nothing left over
    assert imp.active == pytest.approx({"model": 1.0, "kernel": 0.5, "deg": 0.25, "k": 0.5,
                                        "z": 1.0})
    assert all(abs(v) < 1e-12 for v in imp.pairs.values())
    # 2 * 3 * 4 distinct configurations: model a, kernel r (z) or p (deg, z); b (k, z)
    assert imp.n_evaluations == 2 + 6 + 8


def test_exact_importance_of_an_interaction_inside_a_branch():
    # f + k z in branch b: E[f | b, k, z] = 5 + k (1 + z), whose variance 4.6875 splits into
    # k's 2.8125, z's 1.5625 and 0.3125 together; across branches z also interacts with
    # model (E[f | model, z] = 2, 2, 7.5, 10)
    imp = functional_anova(surface(FINITE, with_interaction), FINITE, pairs=True)
    parts = {"model": (6.75 / 2) ** 2, "kernel": 2.0, "deg": 1 / 6, "k": 2.8125 / 2,
             "z": 1.5625 / 4}
    V = parts["model"] + (4 + 1 / 3) / 2 + 4.6875 / 2
    assert imp.variance == pytest.approx(V)
    assert imp.main == pytest.approx({n: v / V for n, v in parts.items()}, abs=1e-12)
    assert imp.pairs[("k", "z")] == pytest.approx(0.3125 / 2 / V)
    assert imp.pairs[("model", "z")] == pytest.approx(0.390625 / V)
    assert imp.pairs[("kernel", "k")] == 0.0  # never active together
    assert sum(imp.main.values()) + sum(imp.pairs.values()) == pytest.approx(1.0)


def test_sobol_estimate_of_a_conditional_space_matches_the_exact_one():
    exact = functional_anova(surface(FINITE, with_interaction), FINITE, pairs=True)
    est = functional_anova(surface(FINITE, with_interaction), FINITE, pairs=True,
                           method="sobol", n_samples=2048)
    assert est.method == "sobol" and est.active == pytest.approx(exact.active, abs=0.01)
    assert est.main == pytest.approx(exact.main, abs=0.01)
    assert est.pairs == pytest.approx(exact.pairs, abs=0.01)


def test_sobol_importance_of_a_continuous_child_is_not_diluted():
    # f = sqrt(12) x in branch a, 0 in b: E[f | a] = sqrt(3), Var(f | a) = 1, so
    # V = 3/4 + 1/2: model 3/5, x 2/5 (measured over the whole cube it would be 1/5)
    space = Space({"model": ["a", "b"], "x": Real(0.0, 1.0, when={"model": "a"}),
                   "y": Real(0.0, 1.0, when={"model": "b"})})

    def f(model, x=None, y=None):
        return math.sqrt(12.0) * x if model == "a" else 0.0

    imp = functional_anova(surface(space, f), space, n_samples=1024)
    assert imp.method == "sobol" and imp.active == {"model": 1.0, "x": 0.5, "y": 0.5}
    assert imp.variance == pytest.approx(1.25, rel=0.01)
    assert imp.main["model"] == pytest.approx(0.6, abs=0.01)
    assert imp.main["x"] == pytest.approx(0.4, abs=0.01)
    assert imp.main["y"] == pytest.approx(0.0, abs=1e-12)


def _trial(i, params, value):
    return Trial(id=i, params=params, state="complete", value=value, asked_at=float(i),
                 start=float(i), end=float(i) + 0.5)


@pytest.fixture(scope="module")
def branches():
    """A study of :data:`SPACE` whose loss depends on ``x`` only in branch a (slope 10, level
    about 5) and is 50 in branch b; kernel is always r, so ``deg`` is never active."""
    rng = np.random.default_rng(0)
    trials = []
    for i in range(60):
        if i % 2:
            params = {"model": "b", "k": int(rng.integers(1, 4))}
        else:
            params = {"model": "a", "x": float(rng.random()), "kernel": "r"}
        trials.append(_trial(i, params, 10.0 * params.get("x", 5.0)))
    return OptimizeResult(SPACE, trials)


def test_dataframe_and_best_params_hold_active_parameters_only(branches):
    df = branches.to_dataframe()
    a = df["model"] == "a"
    assert df.loc[a, "x"].notna().all() and df.loc[~a, "x"].isna().all()
    assert df.loc[a, "k"].isna().all() and df.loc[~a, "k"].notna().all()
    # NaN, not None, in every inactive cell (the categorical column too)
    assert all(isinstance(v, float) and math.isnan(v) for v in df.loc[~a, "kernel"])
    assert df["deg"].isna().all()
    best = branches.best_trial
    assert best.params["model"] == "a" and branches.best_params == best.params
    assert set(branches.best_params) == {"model", "x", "kernel"}
    assert branches.x_iters == [t.params for t in branches.trials]  # nothing made up


def test_a_childs_partial_dependence_from_a_fitted_forest(branches):
    fig = branches.plot_objective(dimensions=["x"], n_points=6, n_samples=64)
    (ax,) = [a for a in fig.axes if a.get_xlabel() == "x"]
    line = ax.lines[0].get_ydata()
    # rising with x at about the level of branch a (loss 10 x, mean 5; the forest smooths
    # it towards the mean of all trials); averaged over the other branch too (loss 50) it
    # would have risen half as much, around 30
    assert np.all(np.diff(line) > 0) and line[-1] - line[0] > 4.0
    assert line.mean() < 15.0


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_evaluations_draw_each_trial_where_the_parameter_is_active(branches):
    fig = branches.plot_evaluations()
    panels = {ax.get_xlabel(): ax for ax in fig.axes}
    for name, count in [("model", 60), ("x", 30), ("kernel", 30), ("deg", 0), ("k", 30)]:
        points = panels[name].collections[0].get_offsets()
        assert np.isfinite(np.asarray(points)).all(axis=1).sum() == count, name
    # the best trial (branch a) is starred where its parameters are active only
    starred = {n for n, ax in panels.items() if len(ax.collections) == 2}
    assert starred == {"model", "x", "kernel"}
    assert _texts(panels["deg"]) == ["inactive in every trial"]
    assert panels["deg"].get_xlim() == (1.0, 3.0)
    assert fig._repr_png_()[:4] == b"\x89PNG"


def test_objective_matrix_of_a_conditional_study(branches):
    fig = branches.plot_objective(n_points=5, n_points_pair=4, n_samples=32)
    assert isinstance(fig, Figure) and fig._repr_png_()[:4] == b"\x89PNG"
    grid = [a for a in fig.axes if a.get_label() != "<colorbar>"][:25]
    names = ["model", "x", "kernel", "deg", "k"]
    # rows i, columns j: x and k are never active together, nor deg and k
    assert _texts(grid[4 * 5 + 1]) == ["never active together"]
    assert _texts(grid[4 * 5 + 3]) == ["never active together"]
    assert _texts(grid[1 * 5 + 0]) == []
    # the diagonal of k: its forbidden value 4 is left blank
    k = grid[24].lines[0].get_ydata()
    assert np.isfinite(k[:3]).all() and np.isnan(k[3])
    assert [grid[20 + j].get_xlabel() for j in range(5)] == names
    assert "where the dimensions are active" in fig._suptitle.get_text()


def test_importance_plot_says_where_a_dimension_is_active(branches):
    imp = branches.importance(n_samples=256)
    # branch b loses k = 4 (forbidden): a is 4/7 of the allowed configurations
    assert imp.active["x"] == pytest.approx(4 / 7) and imp.active["model"] == 1.0
    fig = mfbo.plot_importance(imp)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(t.endswith("(active in 57%)") for t in texts) == 2  # x and kernel
    assert any(t.endswith("%") and "active" not in t for t in texts)  # model: always active


def test_a_dimension_whose_condition_never_holds():
    space = Space({"x": (0.0, 1.0), "y": Real(0.0, 1.0, when=mfbo.Greater("x", 2.0))})
    f = surface(space, lambda x, y=None: x)
    pd = partial_dependence(f, space, "y", n_points=3, n_samples=8)
    assert np.isnan(pd.mean).all() and not pd.counts.any()
    imp = functional_anova(f, space, n_samples=64)
    assert imp.main["y"] == 0.0 and imp.active == {"x": 1.0, "y": 0.0}
    result = OptimizeResult(space, [_trial(i, {"x": i / 9}, i / 9) for i in range(10)])
    fig = result.plot_objective(n_points=4, n_points_pair=3, n_samples=8)
    grid = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    assert _texts(grid[3]) == ["never active"] and _texts(grid[2]) == ["never active together"]
