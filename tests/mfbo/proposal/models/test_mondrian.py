"""The Mondrian model's optional linear trend (``trend=True`` / ``"if-integers"``): its
coefficients, the forest on the residuals, a mean that keeps falling beyond the data,
categorical coordinates left out, the integer-space rule, pickling, bad input; the online
choice between the forests with and without it (``trend_window``): the scores, the forest
without the trend, the default recipe's use of it; and the output transform once a loss has
repeated (``repeat_y_transform``); the log shift robust to a diverging loss
(``robust_shift``) and the fence on transformed losses (``y_cap``); categorical coordinates
one-hot in the forest (``categorical=``): the columns, the spread at a choice never observed,
liars, several outcomes, a resumed study; relevance weights from the initial design
(``relevance=``): when the forest is grown afresh, the same forest as one batch, the floor,
pickling, bad input, a run."""

import dataclasses
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mfbo
from mfbo.proposal import InitialDesign, LocalStep
from mfbo.proposal.models import MondrianModel
from mfbo.proposal.steps.outcomes import OutcomeModels
from mfbo.proposal.recipes import get_recipe
from tests.support import feed_model as _feed, quad, run_trials, run_trials as _run, \
    stepped_quad as _stepped


def _model(trend, n_dims=2, **kw):
    return MondrianModel(n_dims, 0, trend=trend, y_transform=None, **kw)


def test_trend_is_the_ridge_regression_on_centred_coordinates():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = 2.0 + 3.0 * X[:, 0] - X[:, 1] + 0.1 * np.sin(7 * X[:, 2])
    m = _feed(_model(True, 3), X, y)
    A = np.hstack([np.ones((40, 1)), X - 0.5])
    R = 1e-3 * 40 * np.eye(4)
    R[0, 0] = 0.0
    beta = np.linalg.solve(A.T @ A + R, A.T @ y)
    assert np.allclose(m._beta, beta, rtol=1e-12, atol=1e-12)
    assert beta[1] == pytest.approx(3.0, abs=0.1) and beta[2] == pytest.approx(-1.0, abs=0.1)
    # the forest holds the residuals: its own prediction plus the trend is the model's
    Xq = rng.random((5, 3))
    mf = m.forest.predict(Xq)
    mm, _ = m.predict(Xq)
    assert np.allclose(mm, mf + np.hstack([np.ones((5, 1)), Xq - 0.5]) @ beta)
    # ... and that forest is the one grown on the residuals directly
    direct = _feed(_model(False, 3), X, y - A @ beta, one_by_one=False)
    one_fit = _feed(_model(True, 3), X, y, one_by_one=False)
    assert np.allclose(one_fit.forest.predict(Xq), direct.forest.predict(Xq))


def test_beyond_the_data_the_mean_keeps_falling_with_the_trend():
    rng = np.random.default_rng(1)
    X = np.column_stack([0.4 + 0.3 * rng.random(60), rng.random(60)])  # x0 in [0.4, 0.7]
    y = X[:, 0].copy()  # lowest towards x0 = 0, where there are no data
    Xq = np.array([[0.0, 0.5], [0.2, 0.5], [0.4, 0.5]])
    flat, _ = _feed(_model(False), X, y).predict(Xq)
    sloped, _ = _feed(_model(True), X, y).predict(Xq)
    # without the trend the mean beyond the data is no lower than the lowest loss seen
    assert flat.min() > y.min() - 0.01
    assert sloped[0] < sloped[1] < sloped[2] and sloped[0] < y.min() - 0.3
    # the plane's value at x0 = 0, less the ridge's shrinkage of the slope (about a tenth here)
    assert sloped[0] == pytest.approx(0.0, abs=0.1)


def test_categorical_coordinates_are_left_out_of_the_trend():
    rng = np.random.default_rng(2)
    X = rng.random((30, 3))
    y = X[:, 0] + X[:, 2]
    m = _model(True, 3)
    m.set_levels(np.array([0, -3, 4]))
    _feed(m, X, y)
    assert m._beta.shape == (3,)  # intercept, the continuous and the ordered coordinate
    # the optimizer tells its model the space's kinds
    space = mfbo.Space({"x": mfbo.Real(0.0, 1.0), "c": mfbo.Categorical(["a", "b", "c"]),
                        "k": mfbo.Integer(1, 4)})
    opt = mfbo.Optimizer(space, random_state=0, surrogate_options={"trend": "if-integers"})
    assert opt.proposer.model._trend_on  # the space has an integer
    assert list(opt.proposer.model._trend_dims) == [0, 2]


def test_if_integers_takes_the_trend_only_in_a_space_with_an_ordered_coordinate():
    assert not MondrianModel(2, 0, trend="if-integers")._trend_on  # told nothing yet
    for levels, on in (([0, 0], False), ([0, -3], False), ([0, 4], True), ([-2, 7], True)):
        m = MondrianModel(2, 0, trend="if-integers")
        m.set_levels(np.array(levels))
        assert m._trend_on is on
    m = MondrianModel(2, 0, trend=True)
    m.set_levels(np.array([0, 0]))
    assert m._trend_on  # True: always


def test_without_trend_predictions_are_the_forests():
    rng = np.random.default_rng(3)
    X = rng.random((25, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1]
    m = _feed(_model(False), X, y)
    assert m._beta is None
    mm, sm = m.predict(X[:4])
    assert np.array_equal(mm, m.forest.predict(X[:4]))


def test_per_tree_means_carry_the_trend():
    rng = np.random.default_rng(4)
    X = rng.random((30, 2))
    y = 2 * X[:, 0]
    m = _feed(_model(True), X, y)
    Xq = rng.random((6, 2))
    mt, vt = m.predict_per_tree(Xq)
    ft, fv = m.forest.predict_per_tree(Xq)
    assert mt.shape == ft.shape
    assert np.allclose(mt - ft, (np.hstack([np.ones((6, 1)), Xq - 0.5]) @ m._beta)[:, None])
    assert np.array_equal(vt, fv)


def test_pickled_model_predicts_the_same():
    rng = np.random.default_rng(5)
    X = rng.random((20, 2))
    y = X[:, 0] ** 2 + X[:, 1]
    m = _feed(_model(True), X, y)
    m2 = pickle.loads(pickle.dumps(m))
    Xq = rng.random((7, 2))
    assert np.array_equal(m.predict(Xq)[0], m2.predict(Xq)[0])
    # and it goes on learning as the original does
    Xn, yn = np.vstack([X, [[0.1, 0.9]]]), np.append(y, 0.91)
    m.observe(Xn, yn, 1)
    m2.observe(Xn, yn, 1)
    assert np.array_equal(m.predict(Xq)[0], m2.predict(Xq)[0])


def test_a_model_pickled_before_the_trend_existed_still_predicts():
    rng = np.random.default_rng(6)
    X = rng.random((15, 2))
    y = X.sum(axis=1)
    m = _feed(_model(False), X, y)
    for name in ("trend", "_trend_dims", "_beta"):
        delattr(m, name)
    m2 = pickle.loads(pickle.dumps(m))
    m2.observe(np.vstack([X, [[0.5, 0.5]]]), np.append(y, 1.0), 1)
    assert np.all(np.isfinite(m2.predict(X)[0]))


@pytest.mark.parametrize("bad", ["yes", "integers", 1, None])
def test_bad_trend_names_the_argument(bad):
    with pytest.raises(TypeError, match="trend"):
        MondrianModel(2, 0, trend=bad)


def test_constant_liar_copies_refit_the_trend_and_leave_the_original():
    rng = np.random.default_rng(7)
    X = rng.random((20, 2))
    y = X[:, 0]
    m = _feed(_model(True), X, y)
    before = m._beta.copy()
    lied = m.with_lies(X, y, np.array([[0.0, 0.0]]), 5.0)
    assert not np.allclose(lied._beta, before)
    assert np.array_equal(m._beta, before)


def _int_quad(x, k):
    return (x - 0.3) ** 2 + (k / 10 - 0.4) ** 2


def test_the_default_recipe_chooses_the_trend_online_in_integer_spaces_only():
    options = get_recipe("mondrian").model_options
    assert options["trend"] == "if-integers" and options["trend_window"] == 10
    mixed_space = {"x": mfbo.Real(-1, 1), "k": mfbo.Integer(0, 10)}
    options = {"choice": None, "none": {"trend": False}, "always": {"trend_window": None}}
    runs = {k: run_trials(mfbo.Optimizer(mixed_space, random_state=3, surrogate_options=o),
                          _int_quad, 20) for k, o in options.items()}
    assert runs["none"].proposer.model._beta is None
    assert runs["none"].proposer.model._plain is None
    assert runs["choice"].proposer.model._plain is not None
    assert runs["always"].proposer.model._plain is None
    assert runs["always"].proposer.model._beta is not None
    # the initial design is the same; the model-based proposals differ
    n0 = get_recipe("mondrian").initial_size(2)
    a, b, c = ([t.params for t in runs[o].trials] for o in ("none", "choice", "always"))
    assert a[:n0] == b[:n0] == c[:n0] and a != c
    # in a continuous space the default is exactly the forest without the trend
    cont = {"x": mfbo.Real(-1, 1), "y": mfbo.Real(-1, 1)}
    a, b = ([t.params for t in run_trials(mfbo.Optimizer(cont, random_state=3,
                                                          surrogate_options=o), quad,
                                           20).trials] for o in (None, {"trend": False}))
    assert a == b


def _choosing(window=10, **kw):
    return _model(True, 2, trend_window=window, **kw)


def test_the_forest_without_the_trend_is_the_one_a_model_without_it_has():
    rng = np.random.default_rng(8)
    X = rng.random((40, 2))
    y = np.abs(X[:, 0] - 0.5) + 0.3 * X[:, 1] ** 2
    for posterior in ("empirical", "alternating"):
        m = _feed(_choosing(posterior=posterior), X, y)
        plain = _feed(_model(False, posterior=posterior), X, y)
        Xq = rng.random((9, 2))
        plain_mean, plain_std = plain.predict(Xq)
        m._use_trend = False
        assert np.array_equal(m.predict(Xq)[0], plain_mean)
        assert np.array_equal(m.predict(Xq)[1], plain_std)
        # and the forest with it is the trend-only model's
        always = _feed(_model(True, posterior=posterior), X, y)
        m._use_trend = True
        assert np.array_equal(m.predict(Xq)[0], always.predict(Xq)[0])
        assert np.array_equal(m._beta, always._beta)


@pytest.mark.parametrize("loss", [lambda X: 2.0 * X[:, 0] + X[:, 1],
                                  lambda X: np.abs(X[:, 0] - 0.5) + np.abs(X[:, 1] - 0.5)])
def test_the_choice_is_the_smaller_error_of_the_last_window_predicted_before_each_tell(loss):
    rng = np.random.default_rng(9)
    X = rng.random((45, 2))
    y = loss(X)
    m = _choosing(window=10)
    chosen = []
    for i in range(1, 46):
        if i > 1:  # the scores: each forest's mean at the new point before it is told
            t = m._transform(y[i - 1:i])
            with_trend = m.forest.predict(X[i - 1:i]) + m._trend_at(X[i - 1:i])
            without = m._plain.predict(X[i - 1:i])
            expected = (abs(t - with_trend)[0], abs(t - without)[0])
        m.observe(X[:i], y[:i], 1)
        if i > 1:
            assert m._errors[-1] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        last = np.array(m._errors[-10:]).reshape(-1, 2).sum(axis=0)
        assert m._use_trend == (len(m._errors) > 0 and last[0] < last[1])
        chosen.append(m._use_trend)
        forest = m.forest if m._use_trend else m._plain
        Xq = X[:3]
        expected_mean = forest.predict(Xq) + (m._trend_at(Xq) if m._use_trend else 0.0)
        assert np.array_equal(m.predict(Xq)[0], expected_mean)
    assert not chosen[0]  # after the first fit nothing has been predicted yet: no trend
    # a plane is what the trend predicts better; about a valley in the middle of the box
    # (where the trend is about flat) the forest alone is mostly the better
    if loss(np.array([[0.0, 0.0]]))[0] == 0.0:
        assert all(chosen[20:])
    else:
        assert sum(chosen[20:]) < len(chosen[20:]) / 2


def test_a_choosing_model_pickles_and_goes_on_as_the_original():
    rng = np.random.default_rng(10)
    X = rng.random((30, 2))
    y = X[:, 0] + 0.2 * np.sin(9 * X[:, 1])
    m = _feed(_choosing(), X[:25], y[:25])
    m2 = pickle.loads(pickle.dumps(m))
    for i in range(26, 31):
        m.observe(X[:i], y[:i], 1)
        m2.observe(X[:i], y[:i], 1)
        assert m._use_trend == m2._use_trend and m._errors == m2._errors
        assert np.array_equal(m.predict(X)[0], m2.predict(X)[0])


def test_constant_liar_copies_leave_the_choice_of_the_original():
    rng = np.random.default_rng(11)
    X = rng.random((20, 2))
    y = X[:, 0]
    m = _feed(_choosing(), X, y)
    errors, use = list(m._errors), m._use_trend
    lied = m.with_lies(X, y, np.array([[0.0, 0.0], [1.0, 1.0]]), 5.0)
    # lies are not scored: the copy chooses as the original
    assert lied._errors == errors and lied._use_trend == use
    assert m._errors == errors and m._use_trend == use


def test_a_model_pickled_before_the_choice_existed_keeps_its_trend():
    rng = np.random.default_rng(12)
    X = rng.random((15, 2))
    y = X.sum(axis=1)
    m = _feed(_model(True), X, y)
    for name in ("trend_window", "_plain", "_errors", "_use_trend"):
        delattr(m, name)
    m2 = pickle.loads(pickle.dumps(m))
    m2.observe(np.vstack([X, [[0.5, 0.5]]]), np.append(y, 1.0), 1)
    mean = m2.predict(X)[0]
    assert np.array_equal(mean, m2.forest.predict(X) + m2._trend_at(X))


@pytest.mark.parametrize("target", ["rank", "raw", "smac-log"])
def test_a_new_output_transform_is_not_scored_on_the_old_scale(target):
    rng = np.random.default_rng(13)
    X = rng.random((24, 2))
    y = np.round(X[:, 0] + 0.5 * X[:, 1], 1)  # losses that repeat
    m = MondrianModel(2, 0, trend=True, trend_window=30, repeat_y_transform=target)
    for i in range(1, 25):
        if i == 12:
            m.on_repeated_loss()
        m.observe(X[:i], y[:i], 1)
    # every observation after the first but the one told with the new transform is scored
    assert len(m._errors) == 22 and m.y_transform == (None if target == "raw" else target)
    assert np.all(np.isfinite(m._errors)) and np.all(np.isfinite(m.predict(X)[0]))


def test_only_the_compared_errors_are_kept():
    rng = np.random.default_rng(14)
    X = rng.random((40, 2))
    y = X.sum(axis=1)
    short, long = (MondrianModel(2, 0, trend=True, trend_window=w) for w in (5, 100))
    for i in range(1, 41):
        short.observe(X[:i], y[:i], 1)
        long.observe(X[:i], y[:i], 1)
        assert short._errors == long._errors[-5:]
    assert len(short._errors) == 5 and len(long._errors) == 39


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_bad_trend_window_names_the_argument(bad):
    with pytest.raises(ValueError, match="trend_window"):
        MondrianModel(2, 0, trend=True, trend_window=bad)


def test_in_a_run_the_forest_holds_the_residuals_on_the_current_scale():
    opt = run_trials(mfbo.Optimizer({"x": mfbo.Real(-1, 1), "y": mfbo.Real(-1, 1)},
                                    random_state=0, surrogate_options={"trend": True}),
                     quad, 30)
    model = opt.proposer.model
    assert model._beta is not None
    forest = model.forest
    n = forest.n_samples_seen_
    X, y = opt.study.obs.X, opt.study.obs.y
    np.testing.assert_allclose(forest._store.y[:n], model._transform(y) - model._trend_at(X),
                               atol=1e-9)


def _corner(**p):
    """Lowest (0) at the corner (0, 0, 0, 0, 1, 1) of [0, 1]^6, flat (3) where the sum is
    above 3."""
    return min(p["a"] + p["b"] + p["c"] + p["d"] + (1 - p["e"]) + (1 - p["f"]), 3.0)


def test_the_trend_alone_takes_a_run_to_a_corner():
    space = mfbo.Space({k: mfbo.Real(0.0, 1.0) for k in "abcdef"})
    recipe = get_recipe("mondrian")
    best = {}
    for on in (False, True):
        r = dataclasses.replace(recipe.with_settings(LocalStep, linear=False), model_options={
            **recipe.model_options, "trend": on, "trend_window": None})
        best[on] = [min(t.value for t in run_trials(
            mfbo.Optimizer(space, surrogate=r, random_state=s), _corner, 50).trials)
            for s in range(3)]
    assert max(best[True]) < 0.05
    assert min(best[False]) > 0.1


SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _opt(options=None, **kw):
    return mfbo.Optimizer(SPACE, random_state=kw.pop("random_state", 5),
                          surrogate_options=options, **kw)


@pytest.mark.parametrize("name", ["y_transform", "repeat_y_transform"])
@pytest.mark.parametrize("bad", ["LOG", "identity", 1, True, ("log",)])
def test_bad_transforms_name_the_argument(name, bad):
    with pytest.raises(ValueError, match=name):
        MondrianModel(2, 0, **{name: bad})


def test_raw_is_a_name_for_untransformed_losses():
    runs = [_run(_opt({"y_transform": t}, random_state=1), quad, 25) for t in (None, "raw")]
    assert runs[1].proposer.model.y_transform is None
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_without_repeats_nothing_changes():
    runs = [_run(_opt(o, random_state=2), quad, 30) for o in (None, {"repeat_y_transform": "raw"})]
    assert not runs[1].study.loss_repeated
    assert runs[1].proposer.model.y_transform == "log"
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_after_a_repeat_each_proposal_is_the_new_transforms():
    """Before the first repeat every proposal is the log transform's, after it the one raw
    losses make from the same observations (the forest's partitions do not depend on the
    losses, so switching mid-study gives the forest raw losses from the start would)."""
    opt = _run(_opt({"repeat_y_transform": "raw"}, n_initial=4), _stepped, 16)
    assert opt.proposer.model.y_transform is None
    params = [t.params for t in opt.trials]
    values = [t.value for t in opt.trials]
    first_repeat = next(i for i, v in enumerate(values) if v in values[:i])
    assert 4 <= first_repeat < 14
    for n in range(4, 16):
        alone = _opt({"y_transform": None if n > first_repeat else "log"}, n_initial=4)
        alone.enqueue(params[:n])
        for v in values[:n]:
            alone.tell(alone.ask(), v)
        assert alone.ask().params == params[n], n
    # and the switch does change the proposals after the repeat
    plain = _run(_opt(n_initial=4), _stepped, 16)
    assert [t.params for t in plain.trials][:first_repeat + 1] == params[:first_repeat + 1]
    assert [t.params for t in plain.trials] != params


def test_the_switched_forest_predicts_as_one_grown_on_the_new_targets():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = np.round(X.sum(axis=1), 1)  # repeats
    switched = MondrianModel(3, 7, repeat_y_transform="rank")
    switched.observe(X[:20], y[:20], 20)
    switched.on_repeated_loss()
    switched.observe(X, y, 20)
    direct = MondrianModel(3, 7, y_transform="rank")
    direct.observe(X[:20], y[:20], 20)
    direct.observe(X, y, 20)
    U = rng.random((50, 3))
    for a, b in zip(switched.predict(U), direct.predict(U)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # once only: a second call changes nothing
    switched.on_repeated_loss()
    assert switched.y_transform == "rank"


def test_failed_trials_do_not_switch_it():
    opt = _opt({"repeat_y_transform": "raw"}, n_initial=3)
    for v in (3.0, 1.0, float("nan"), float("nan"), 2.0):
        opt.tell(opt.ask(), v)
    opt.ask()
    assert opt.proposer.model.y_transform == "log"
    opt.tell(opt.ask(), 1.0)
    opt.ask()
    assert opt.proposer.model.y_transform is None


def test_a_pickled_optimizer_keeps_it():
    opt = _run(_opt({"repeat_y_transform": "raw"}, n_initial=4), _stepped, 12)
    opt.ask()
    copy = pickle.loads(pickle.dumps(opt))
    assert copy.proposer.model.y_transform is None
    assert copy.ask().params == opt.ask().params


def test_a_resumed_study_switches_too(tmp_path):
    path = str(tmp_path / "s.db")
    opt = _run(_opt({"repeat_y_transform": "raw"}, n_initial=4, storage=path), _stepped, 12)
    assert opt.study.loss_repeated
    opt.close()
    resumed = _opt({"repeat_y_transform": "raw"}, n_initial=4, storage=path)
    resumed.ask()
    assert resumed.proposer.model.y_transform is None


class _DuckModel:
    """A model of its own that does not subclass Model (no on_repeated_loss)."""

    is_informative = True

    def __init__(self, n_dims, random_state):
        self.n = 0

    def observe(self, X, y, n_new):
        self.n = X.shape[0]

    @property
    def ready(self):
        return self.n > 0

    def predict(self, X):
        return np.zeros(len(X)), np.ones(len(X))

    def incumbent(self, y):
        return float(np.min(y))


def test_a_model_without_the_hook_runs_through_repeats():
    recipe = mfbo.Recipe(model=_DuckModel, initial_design=InitialDesign(size=3))
    opt = _run(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=0), _stepped, 10)
    assert opt.study.loss_repeated and opt.proposer.model.n == 10


def test_the_log_shift_from_the_initial_designs_median():
    from mfbo.proposal.models.targets import log_shift
    y = np.array([4.0, 2.0, 6.0, 1.0, 1.5, 1.6, 1.7, 1.8])
    assert log_shift(y) == pytest.approx(0.3 * (np.median(y) - 1.0))
    assert log_shift(y, rows=3) == pytest.approx(0.3 * (4.0 - 1.0))
    assert log_shift(y[:2], rows=3) == pytest.approx(0.3 * (3.0 - 2.0))
    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    design = MondrianModel(2, 0, shift_from="design")
    design.set_initial_size(3)
    design.observe(X, y, 8)
    plain = MondrianModel(2, 0)
    plain.observe(X, y, 8)
    assert design._tf[0] == pytest.approx(1.0 - 0.3 * 3.0)
    assert plain._tf[0] == pytest.approx(1.0 - log_shift(y))
    alone = MondrianModel(2, 0, shift_from="design")  # no initial size told: all losses
    alone.observe(X, y, 8)
    assert alone._tf[0] == plain._tf[0]
    with pytest.raises(ValueError, match="shift_from"):
        MondrianModel(2, 0, shift_from="first")


def test_an_optimizer_tells_its_model_the_initial_designs_size():
    opt = mfbo.Optimizer({"x": mfbo.Real(0, 1)}, random_state=0, n_initial=4,
                         surrogate_options={"shift_from": "design"})
    assert opt.model._initial == 4 and opt.model.shift_from == "design"


def test_the_symlog_transform_keeps_a_constraints_sign_and_zero():
    from mfbo.proposal.models.targets import symlog

    v = np.array([-1e6, -2.0, -1e-9, 0.0, 1e-9, 0.5, 3e4])
    t = symlog(v)
    assert np.array_equal(np.sign(t), np.sign(v)) and t[3] == 0.0
    assert t == pytest.approx(np.sign(v) * np.log1p(np.abs(v)))
    assert np.all(np.diff(t) > 0)  # increasing: feasibility is the same under the model
    rng = np.random.default_rng(2)
    X = rng.random((40, 2))
    c = 1e4 * (X[:, 0] - 0.5) ** 3  # heavy tails, met where x < 0.5
    m = _feed(MondrianModel(2, 0, y_transform="symlog", trend=True), X, c)
    assert m.to_model_scale([0.0])[0] == 0.0
    assert np.array_equal(m.to_model_scale(c), symlog(c))
    mean, _ = m.predict(np.array([[0.05, 0.5], [0.95, 0.5]]))
    assert mean[0] < 0 < mean[1]
    copy = pickle.loads(pickle.dumps(m))
    assert np.array_equal(copy.predict(X[:5])[0], m.predict(X[:5])[0])
    with pytest.raises(ValueError, match="y_transform must be .*'symlog'"):
        MondrianModel(2, 0, y_transform="signed-log")


def _capped(cap, y_transform="log", **kw):
    return MondrianModel(2, 0, y_transform=y_transform, y_cap=cap, **kw)


def test_the_fence_caps_only_losses_above_it():
    rng = np.random.default_rng(11)
    X = rng.random((30, 2))
    y = np.r_[1.0 + rng.random(29), 1e25]
    m = _feed(_capped(2.0, robust_shift=True), X, y, one_by_one=False)
    plain = _feed(_capped(None, robust_shift=True), X, y, one_by_one=False)
    t, t_plain = m.to_model_scale(y), plain.to_model_scale(y)
    best, middle = plain.to_model_scale([y.min(), np.median(y)])
    fence = middle + 2.0 * (middle - best)
    assert m._cap == pytest.approx(fence)
    below = t_plain <= fence
    assert below.sum() >= 28 and np.array_equal(t[below], t_plain[below])
    assert np.all(t[~below] == fence)
    assert m.incumbent(y) == plain.incumbent(y)


def test_a_diverging_loss_no_longer_spreads_the_forest():
    rng = np.random.default_rng(12)
    X = rng.random((40, 2))
    y = (X ** 2).sum(axis=1)
    y[X[:, 0] > 0.9] = 1e25  # a corner where the losses diverge
    Xq = rng.random((200, 2))
    std = {cap: _feed(_capped(cap, robust_shift=True), X, y).predict(Xq)[1].max()
           for cap in (None, 2.0)}
    assert std[2.0] < std[None] / 5


def test_no_fence_when_every_loss_ties_and_the_worst_sets_it_when_half_do():
    X = np.random.default_rng(13).random((10, 2))
    assert _feed(_capped(1.0), X, np.ones(10), one_by_one=False)._cap is None
    y = np.r_[np.zeros(6), 1.0, 2.0, 3.0, 1e9]
    m = _feed(_capped(1.0), X, y, one_by_one=False)
    best, top = _feed(_capped(None), X, y, one_by_one=False).to_model_scale([0.0, 1e9])
    assert m._cap == pytest.approx(best + (top - best))  # the median ties the best


def test_a_model_pickled_before_the_fence_existed_still_predicts():
    rng = np.random.default_rng(14)
    X = rng.random((12, 2))
    m = _feed(_capped(None), X, X.sum(axis=1))
    for name in ("y_cap", "_cap"):
        delattr(m, name)
    m2 = pickle.loads(pickle.dumps(m))
    m2.observe(np.vstack([X, [[0.5, 0.5]]]), np.append(X.sum(axis=1), 1.0), 1)
    assert np.all(np.isfinite(m2.predict(X)[0]))


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "2"])
def test_a_bad_fence_names_the_argument(bad):
    with pytest.raises(ValueError, match="y_cap"):
        MondrianModel(2, 0, y_cap=bad)


def test_a_fence_may_be_a_numpy_number():
    assert MondrianModel(2, 0, y_cap=np.int64(2)).y_cap == 2.0
    assert MondrianModel(2, 0, y_cap=np.float32(0.5)).y_cap == 0.5


def test_one_diverging_loss_no_longer_sets_the_log_shift():
    from mfbo.proposal.models.targets import log_shift
    y = np.array([0.88, 1.0, 2.3e24, 0.509, 0.73, 0.534, 0.523, 0.537, 0.76, 1.05, 0.5089])
    assert log_shift(y) == pytest.approx(1e-3 * (y.max() - y.min()))  # beside which ...
    plain = _feed(_capped(None), np.random.default_rng(15).random((11, 2)), y, False)
    assert np.ptp(plain.to_model_scale(np.delete(y, 2))) == 0.0  # ... all others look alike
    above = y[y > y.min()]
    assert log_shift(y, robust=True) == pytest.approx(0.3 * (np.median(above) - y.min()))
    robust = _feed(_capped(None, robust_shift=True), np.random.default_rng(15).random((11, 2)),
                   y, False)
    t = robust.to_model_scale(np.delete(y, 2))
    assert np.all(np.diff(t[np.argsort(np.delete(y, 2))]) > 0) and np.ptp(t) > 2  # resolved


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=30))
def test_without_a_diverging_loss_the_robust_shift_is_the_shift(values):
    from mfbo.proposal.models.targets import log_shift
    y = np.asarray(values)
    lo, spread = y.min(), np.ptp(y)
    above = y[y > lo]
    if above.size and 1e-3 * spread > 0.3 * (np.median(above) - lo):
        return  # (a range 300 times the median distance above the best: the case it mends)
    assert log_shift(y, robust=True) == log_shift(y)


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_a_bad_robust_shift_names_the_argument(bad):
    with pytest.raises(TypeError, match="robust_shift"):
        MondrianModel(2, 0, robust_shift=bad)


# -- how categorical coordinates enter the forest (categorical=) ------------------------------

CAT_LEVELS = np.array([0, -4, -2, 3])  # a real, four choices, two choices, an integer


def _cat_model(categorical, levels=CAT_LEVELS, seed=0, **kw):
    m = MondrianModel(len(levels), seed, categorical=categorical, y_transform=None, **kw)
    m.set_levels(levels)
    return m


def _cat_data(n=30, seed=0, missing=None):
    rng = np.random.default_rng(seed)
    choice = rng.integers(0, 4, n)
    if missing is not None:
        choice[choice == missing] = (missing + 1) % 4
    X = np.c_[rng.random(n), (choice + 0.5) / 4, (rng.integers(0, 2, n) + 0.5) / 2,
              (rng.integers(0, 3, n) + 0.5) / 3]
    y = np.array([1.0, 2.0, 3.0, 4.0])[choice] + 0.1 * X[:, 0] + 0.01 * rng.random(n)
    return X, y


def test_one_hot_columns_by_hand():
    X = np.array([[0.3, 0.125, 0.25, 0.5],   # choice 0
                  [0.7, 0.875, 0.75, 1 / 6],  # choice 3
                  [0.1, 0.6, 0.25, 0.5],     # choice 2 (anywhere in its quarter)
                  [0.2, -0.5, -0.5, 0.5]])   # inactive (outside the cube)
    wide = _cat_model("one-hot").encode(X)
    # the real, the two-choice and the integer coordinate first, as they are
    assert np.array_equal(wide[:, :3], X[:, [0, 2, 3]])
    assert np.array_equal(wide[:, 3:], [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 0]])
    narrow = _cat_model("one-hot-narrow").encode(X)
    assert np.array_equal(narrow[:, 3:], wide[:, 3:] / 4)
    assert _cat_model("one-hot").forest.feature_bounds == [[0.0, 1.0]] * 7


def test_ordinal_and_spaces_without_wide_choices_are_left_as_they_are():
    X, _ = _cat_data()
    assert _cat_model("ordinal").encode(X) is not None
    assert np.array_equal(_cat_model("ordinal").encode(X), X)
    m = _cat_model("one-hot", levels=np.array([0, -2, 3, 0]))
    assert m._one_hot is None and np.array_equal(m.encode(X), X)


def test_the_model_is_one_told_the_one_hot_columns():
    X, y = _cat_data()
    m = _feed(_cat_model("one-hot"), X, y)
    plain = _feed(_cat_model("ordinal", levels=np.zeros(7, dtype=int)), m.encode(X), y)
    Xq, _ = _cat_data(8, seed=1)
    for got, expected in zip(m.predict(Xq), plain.predict(m.encode(Xq))):
        assert np.array_equal(got, expected)
    for got, expected in zip(m.predict_per_tree(Xq), plain.predict_per_tree(m.encode(Xq))):
        assert np.array_equal(got, expected)


def test_a_choice_never_observed_stands_out_by_its_spread():
    X, y = _cat_data(40, missing=2)
    Xq = np.array([[0.5, (k + 0.5) / 4, 0.25, 0.5] for k in range(4)])

    def spread_ratio(categorical):  # the unseen choice's std over the others' mean std
        stds = np.mean([_feed(_cat_model(categorical, seed=s), X, y).predict(Xq)[1]
                        for s in range(4)], axis=0)
        assert np.argmax(stds) == 2, (categorical, stds)
        return stds[2] / np.delete(stds, 2).mean()

    assert spread_ratio("one-hot") > 5 * spread_ratio("ordinal")
    spread_ratio("one-hot-narrow")


def test_pickled_and_lied_to_models():
    X, y = _cat_data()
    m = _feed(_cat_model("one-hot"), X, y)
    Xq, _ = _cat_data(6, seed=2)
    copy = pickle.loads(pickle.dumps(m))
    assert np.array_equal(copy.predict(Xq)[0], m.predict(Xq)[0])
    before = m.predict(Xq)
    lied = m.with_lies(X, y, Xq[:1], 0.0)
    assert not np.array_equal(lied.predict(Xq)[0], before[0])
    assert np.array_equal(m.predict(Xq)[0], before[0])  # the original untouched


def test_several_outcomes_are_predicted_together_as_each_alone():
    X, y = _cat_data()
    models = [_feed(_cat_model("one-hot", posterior="empirical"), X, y),
              _feed(_cat_model("one-hot", posterior="empirical"), X, -y)]
    joint = OutcomeModels(models)
    assert joint._shared is not None
    Xq, _ = _cat_data(9, seed=3)
    for (m, s), model in zip(joint.predict(Xq), models):
        am, ast = model.predict(Xq)
        assert np.allclose(m, am) and np.allclose(s, ast)


CAT_SPACE = mfbo.Space({"x": mfbo.Real(-2.0, 2.0), "kind": mfbo.Categorical(list("abcde")),
                    "n": mfbo.Integer(1, 5)})


def _cat_loss(x, kind, n):
    return (x - 0.5) ** 2 + "abcde".index(kind) * 0.3 + abs(n - 3)


def test_an_optimizer_takes_it_and_a_resumed_study_proposes_the_same(tmp_path):
    path = str(tmp_path / "s.db")
    opts = dict(random_state=3, n_initial=6, surrogate_options={"categorical": "one-hot"})
    opt = run_trials(mfbo.Optimizer(CAT_SPACE, storage=path, **opts), _cat_loss, 14)
    assert opt.proposer.model._one_hot is not None
    opt.close()
    resumed = mfbo.Optimizer(CAT_SPACE, storage=path, **opts)
    again = run_trials(mfbo.Optimizer(CAT_SPACE, **opts), _cat_loss, 14)
    assert resumed.ask().params == again.ask().params


def test_minimize_runs_with_it():
    result = mfbo.minimize(_cat_loss, CAT_SPACE, n_calls=20, random_state=0, progress_bar=False,
                           surrogate_options={"categorical": "one-hot-narrow"})
    assert len(result.func_vals) == 20 and result.func_vals.min() < 1.0


@pytest.mark.parametrize("bad", ["onehot", "", None, 1])
def test_a_bad_encoding_names_the_argument(bad):
    with pytest.raises(ValueError, match="categorical"):
        MondrianModel(2, 0, categorical=bad)


def test_a_model_pickled_without_the_later_settings_goes_on_as_one_with_their_defaults():
    """A model pickled by an earlier version lacks the settings and state added since: it is
    read with the values that reproduce its behaviour then."""
    rng = np.random.default_rng(14)
    X = rng.random((15, 2))
    y = np.exp(X.sum(axis=1))
    m = _feed(MondrianModel(2, 0), X, y)
    old = pickle.loads(pickle.dumps(m))
    for name in MondrianModel._PICKLE_DEFAULTS:
        delattr(old, name)
    m2 = pickle.loads(pickle.dumps(old))
    for name, value in MondrianModel._PICKLE_DEFAULTS.items():
        assert getattr(m2, name) == value
    Xn, yn = np.vstack([X, [[0.2, 0.7]]]), np.append(y, 1.5)
    m.observe(Xn, yn, 1)
    m2.observe(Xn, yn, 1)
    Xq = rng.random((20, 2))
    assert np.array_equal(m.predict(Xq)[0], m2.predict(Xq)[0])
    assert np.array_equal(m.predict(Xq)[1], m2.predict(Xq)[1])


# -- relevance weights from the initial design (relevance=) ------------------------------------

def _tell(model, X, y, start, end):
    """``model`` told observations ``start + 1`` to ``end`` of ``X``, ``y`` one at a time."""
    for i in range(start + 1, end + 1):
        model.observe(X[:i], y[:i], 1)
    return model


def _relevance_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    return X, (X[:, 0] - 0.3) ** 2 + 0.01 * X[:, 2]  # the second coordinate does not matter


@pytest.mark.parametrize("kind", ["mutual_info", "f_score"])
def test_relevance_grows_the_forest_afresh_with_weights_once_the_design_is_told(kind):
    X, y = _relevance_data()
    m = MondrianModel(3, 0, relevance=kind)
    m.set_initial_size(20)
    _tell(m, X, y, 0, 19)
    assert np.array_equal(m.forest.feature_weights_, np.ones(3))  # the design is not complete
    _tell(m, X, y, 19, 21)
    w = m.forest.feature_weights_
    assert w[0] == 1.0 and w[1] < 0.5 and m.forest.n_samples_seen_ == 21
    _tell(m, X, y, 21, 40)  # online after that, the weights kept
    assert np.array_equal(m.forest.feature_weights_, w) and m.forest.n_samples_seen_ == 40


def test_the_weighted_forest_is_the_one_grown_in_one_batch_from_the_design():
    X, y = _relevance_data(25)
    online = MondrianModel(3, 0, relevance="f_score")
    online.set_initial_size(20)
    _feed(online, X[:20], y[:20])
    batch = MondrianModel(3, 0, relevance="f_score")
    batch.set_initial_size(20)
    batch.observe(X[:20], y[:20], 20)
    Xq = np.random.default_rng(1).random((9, 3))
    assert np.array_equal(online.predict(Xq)[0], batch.predict(Xq)[0])


@pytest.mark.parametrize("relevance", [None, "mutual_info"])
def test_without_relevance_the_forest_is_never_grown_afresh(relevance):
    X, y = _relevance_data()
    m = MondrianModel(3, 0, relevance=relevance)
    m.set_initial_size(20)
    _tell(m, X, y, 0, 19)
    forest = m.forest
    _tell(m, X, y, 19, 40)
    assert (m.forest is forest) == (relevance is None)
    assert np.array_equal(m.forest.feature_weights_, np.ones(3)) == (relevance is None)


def test_a_weighted_model_pickles_and_goes_on_as_the_original():
    X, y = _relevance_data()
    m = MondrianModel(3, 0, relevance="mutual_info", trend=True, trend_window=5)
    m.set_initial_size(20)
    _feed(m, X[:30], y[:30])
    m2 = pickle.loads(pickle.dumps(m))
    for model in (m, m2):
        model.observe(X[:31], y[:31], 1)
    Xq = np.random.default_rng(3).random((9, 3))
    assert np.array_equal(m.predict(Xq)[0], m2.predict(Xq)[0])


def test_a_model_pickled_before_relevance_existed_goes_on_unweighted():
    X, y = _relevance_data()
    m = MondrianModel(3, 0)
    m.set_initial_size(20)
    _tell(m, X, y, 0, 10)
    for name in ("relevance", "_weighted"):
        delattr(m, name)
    m2 = pickle.loads(pickle.dumps(m))
    _tell(m2, X, y, 10, 40)
    assert np.array_equal(m2.forest.feature_weights_, np.ones(3))


def test_no_weight_is_below_the_floor():
    X, y = _relevance_data()
    m = MondrianModel(3, 0, relevance="mutual_info", relevance_floor=0.25)
    m.set_initial_size(20)
    _tell(m, X, y, 0, 20)
    w = m.forest.feature_weights_
    assert w.max() == 1.0 and w.min() == 0.25  # the second coordinate does not matter


@pytest.mark.parametrize("bad", ["yes", True, 1, "mi"])
def test_bad_relevance_names_the_argument(bad):
    with pytest.raises(ValueError, match="relevance"):
        MondrianModel(3, 0, relevance=bad)


@pytest.mark.parametrize("bad", [0, 0.0, 1.5, -0.1, True, "0.2", float("nan")])
def test_bad_relevance_floor_names_the_argument(bad):
    with pytest.raises(ValueError, match="relevance_floor"):
        MondrianModel(3, 0, relevance="mutual_info", relevance_floor=bad)


def test_a_run_with_relevance_weights_its_forest_after_the_design():
    def f(x, junk):
        return (x - 0.3) ** 2

    opt = mfbo.Optimizer({"x": mfbo.Real(0, 1), "junk": mfbo.Real(0, 1)}, random_state=0,
                         surrogate_options={"relevance": "f_score"})
    _run(opt, f, 16)
    forest = opt.proposer.model.forest
    assert forest.feature_weights_[0] == 1.0 and forest.feature_weights_[1] < 0.5
    assert len(opt.result().trials) == 16
