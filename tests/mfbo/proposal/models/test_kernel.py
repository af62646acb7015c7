"""The Mondrian kernel's Gaussian process as a surrogate (:class:`MondrianKernelModel`): its
predictions against the exact Laplace-kernel Gaussian process it approximates, the choice of
lifetime and noise by the marginal likelihood and when it is made again, the spread far from
the data, the draws' mixture, the log transform of huge losses, pickling, bad input; and the
recipe field that makes it each objective's model in a study of several objectives
(``Recipe(objectives_model=...)``): which outcomes get it, a resumed study, old pickles."""

import dataclasses
import pickle

import numpy as np
import pytest

import mfbo
from mfbo.proposal.models import MondrianKernelModel, MondrianModel
from mfbo.proposal.recipes import Recipe, get_recipe
from surrogates.kernel import MondrianKernelRidge
from tests.support import feed_model as _feed


def _data(n=15, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, np.sin(3 * X[:, 0]) + X[:, 1] ** 2


def _laplace_gp(X, z, Xq, lifetime, ratio):
    """The exact GP with kernel ``s2 exp(-lifetime |x - x'|_1)``, noise ``s2 ratio`` and
    ``s2`` at its marginal-likelihood value, on centred targets ``z``."""
    def k(A, B):
        return np.exp(-lifetime * np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2))
    K = k(X, X) + ratio * np.eye(len(X))
    alpha = np.linalg.solve(K, z)
    s2 = float(z @ alpha) / len(z)
    Kq = k(Xq, X)
    mean = Kq @ alpha
    var = s2 * (1 + ratio - np.einsum("ij,ji->i", Kq, np.linalg.solve(K, Kq.T)))
    return mean, np.sqrt(var)


def test_predictions_approach_the_exact_laplace_kernel_process():
    X, y = _data()
    Xq = np.random.default_rng(1).random((20, 2))
    model = MondrianKernelModel(2, 0, n_trees=3000, lifetimes=(3.0,), noise_ratios=(0.01,),
                                y_transform="raw")
    model.observe(X, y, len(y))
    mean, std = model.predict(Xq)
    centre, spread = y.mean(), y.std()
    exact_mean, exact_std = _laplace_gp(X, (y - centre) / spread, Xq, 3.0, 0.01)
    # Monte Carlo over 3000 partitions: within a few hundredths of the targets' spread
    assert np.max(np.abs(mean - (exact_mean * spread + centre))) < 0.06 * spread
    assert np.max(np.abs(std - exact_std * spread)) < 0.06 * spread


def test_the_lifetime_and_noise_are_those_of_the_largest_marginal_likelihood():
    X, y = _data(25)
    model = MondrianKernelModel(2, 0, lifetimes=(0.5, 4.0, 30.0), noise_ratios=(1e-3, 0.3),
                                y_transform="raw")
    model.observe(X, y, len(y))
    z = (y - y.mean()) / y.std()
    liks = {}
    for lam in (0.5, 4.0, 30.0):
        for d2 in (1e-3, 0.3):
            est = MondrianKernelRidge(n_trees=50, lifetime=lam, delta2=d2, solver="dual",
                                      prior_variance="auto", random_state=model._seed)
            liks[lam, d2] = est.fit(X, z).log_marginal_likelihood_
    assert model.chosen == max(liks, key=liks.get)


def test_the_choice_is_made_again_at_every_refresh_and_kept_in_between(monkeypatch):
    X, y = _data(31)
    model = MondrianKernelModel(2, 0, lifetimes=(1.0, 8.0), noise_ratios=(1e-2,), refresh=5)
    grids = []
    real_fit = MondrianKernelRidge.fit

    def counting_fit(self, X, y, X_unlabeled=None):
        grids[-1] += 1
        return real_fit(self, X, y, X_unlabeled)

    monkeypatch.setattr(MondrianKernelRidge, "fit", counting_fit)
    for i in range(1, 32):
        grids.append(0)
        model.observe(X[:i], y[:i], 1)
    # one fit at 1 and 2 observations, the whole grid up to 19, then at 20, 25, 30 only
    assert grids[:2] == [1, 1] and set(grids[2:19]) == {2}
    assert [n for n, g in enumerate(grids, 1) if n >= 20 and g == 2] == [20, 25, 30]
    assert all(g == 1 for n, g in enumerate(grids, 1) if n >= 20 and n % 5)


def test_far_from_the_data_the_spread_grows_to_the_prior():
    X, y = _data(20)
    X = 0.2 * X  # the data in a corner
    model = _feed(MondrianKernelModel(2, 0, y_transform="raw"), X, y)
    _, near = model.predict(X[:5])
    mean, far = model.predict(np.array([[0.99, 0.99]]))
    lam, d2 = model.chosen
    spread = y.std()
    s2 = model._estimator._prior_var()  # the prior variance of the standardised targets
    assert far[0] > 3 * near.max()
    assert far[0] == pytest.approx(spread * np.sqrt(s2 * (1 + d2)), rel=0.05)
    assert mean[0] == pytest.approx(y.mean(), abs=0.1 * spread)


def test_the_draws_mixture_has_the_predictive_mean_and_variance():
    X, y = _data(20)
    model = _feed(MondrianKernelModel(2, 3, n_draws=16), X, y)
    U = np.random.default_rng(2).random((30, 2))
    mean, std = model.predict(U)
    means, variances = model.predict_per_tree(U)
    assert means.shape == variances.shape == (30, 16)
    assert np.allclose(means.mean(axis=1), mean)
    mixture = variances.mean(axis=1) + means.var(axis=1)
    assert np.allclose(mixture, std ** 2)
    # the same draw at every point, in an order the seed fixes
    q = (means - mean[:, None]) / std[:, None]
    assert np.allclose(q, q[0])
    again = _feed(MondrianKernelModel(2, 3, n_draws=16), X, y).predict_per_tree(U)
    assert np.array_equal(again[0], means)


def test_the_model_is_a_function_of_its_observations_and_pickles():
    X, y = _data(22)
    one = _feed(MondrianKernelModel(2, 7), X, y)
    batch = MondrianKernelModel(2, 7)
    batch.observe(X[:21], y[:21], 21)
    batch.observe(X, y, 1)
    U = np.random.default_rng(3).random((10, 2))
    assert np.array_equal(one.predict(U)[0], batch.predict(U)[0])
    copy = pickle.loads(pickle.dumps(one))
    assert all(np.array_equal(a, b) for a, b in zip(copy.predict(U), one.predict(U)))


def test_the_log_transform_keeps_huge_and_diverging_losses_finite():
    X, y = _data(20)
    y = y + 2.0
    y[3] = 1e300  # a diverging loss
    model = _feed(MondrianKernelModel(2, 0), X, y)
    mean, std = model.predict(np.random.default_rng(4).random((10, 2)))
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std > 0)
    t = model.to_model_scale(np.delete(y, 3))
    # the other losses stay apart on the model's scale (the robust shift)
    assert np.ptp(t) > 1.0
    assert model.incumbent(y) == pytest.approx(t.min())


@pytest.mark.parametrize("kwargs, match", [
    ({"n_trees": 0}, "n_trees"), ({"refresh": 1.5}, "refresh"), ({"n_draws": True}, "n_draws"),
    ({"lifetimes": ()}, "lifetimes"), ({"lifetimes": (1.0, -2.0)}, "lifetimes"),
    ({"noise_ratios": "0.1"}, "noise_ratios"), ({"noise_ratios": (np.inf,)}, "noise_ratios"),
    ({"y_transform": "rank"}, "y_transform"),
])
def test_bad_settings_are_refused_naming_them(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        MondrianKernelModel(2, 0, **kwargs)


# -- the recipe field: each objective's model in a study of several objectives -----------------
_KERNEL = dataclasses.replace(get_recipe("mondrian"), objectives_model=MondrianKernelModel,
                              objectives_model_options={"refresh": 3})


def _two(x, y):
    return {"f1": x, "f2": (1 - x) ** 2 + y, "c": x - 0.8}


def test_the_objectives_get_the_objectives_model_and_the_constraints_the_forest():
    opt = mfbo.Optimizer({"x": mfbo.Real(0, 1), "y": mfbo.Real(0, 1)}, surrogate=_KERNEL,
                         directions={"f1": "minimize", "f2": "minimize"}, constraints=["c"],
                         surrogate_options={"n_estimators": 5}, random_state=0)
    models = opt.proposer.models  # the objectives, the constraint, whether a trial failed
    assert [type(m) for m in models] == [MondrianKernelModel, MondrianKernelModel,
                                        MondrianModel, MondrianModel]
    assert models[0].refresh == 3  # objectives_model_options, not surrogate_options
    assert models[2]._forest_args["n_estimators"] == 5 and models[2].y_transform is None
    # one objective: the recipe's model, whatever its objectives_model
    single = mfbo.Optimizer({"x": mfbo.Real(0, 1)}, surrogate=_KERNEL, random_state=0)
    assert type(single.proposer.model) is MondrianModel


def test_a_study_of_kernel_objectives_resumes_as_it_ran(tmp_path):
    space = {"x": mfbo.Real(0, 1), "y": mfbo.Real(0, 1)}
    kw = dict(surrogate=_KERNEL, directions={"f1": "minimize", "f2": "minimize"},
              constraints=["c"], random_state=5)

    def run(opt, n):
        for _ in range(n):
            trial = opt.ask()
            opt.tell(trial, _two(**trial.params))
        return opt

    whole = run(mfbo.Optimizer(space, **kw), 22)
    db = str(tmp_path / "s.db")
    run(mfbo.Optimizer(space, storage=db, **kw), 14).close()
    resumed = run(mfbo.Optimizer(space, storage=db, **kw), 8)
    assert [t.params for t in resumed.trials] == [t.params for t in whole.trials]
    assert isinstance(resumed.proposer.models[0], MondrianKernelModel)


def test_mondrian_kernel_is_a_named_surrogate_for_every_outcome():
    recipe = get_recipe("mondrian-kernel")
    assert recipe.model is MondrianKernelModel and recipe.objectives_model is None
    assert recipe.steps == get_recipe("mondrian").steps
    opt = mfbo.Optimizer({"x": mfbo.Real(0, 1)}, surrogate="mondrian-kernel",
                         constraints=["c"], random_state=0)
    assert [type(m) for m in opt.proposer.models] == [MondrianKernelModel] * 3
    # the constraints' values (and whether a trial failed) untransformed
    assert [m.y_transform for m in opt.proposer.models] == ["log", "raw", "raw"]
    res = mfbo.minimize(lambda x: (x - 0.3) ** 2, {"x": mfbo.Real(0, 1)}, n_calls=15,
                        surrogate="mondrian-kernel", random_state=0, progress_bar=False)
    assert res.best_value < 0.01


def test_the_recipe_field_is_checked_and_old_recipes_unpickle():
    with pytest.raises(TypeError, match="objectives_model"):
        Recipe(model=MondrianModel, objectives_model=3)
    with pytest.raises(TypeError, match="objectives_model_options"):
        Recipe(model=MondrianModel, objectives_model_options=[1])
    unknown = dataclasses.replace(_KERNEL, objectives_model_options={"n_tres": 5})
    with pytest.raises(TypeError, match="objectives_model_options for"):
        mfbo.Optimizer({"x": mfbo.Real(0, 1)}, surrogate=unknown, directions=["minimize"] * 2)
    state = get_recipe("mondrian").__getstate__()
    del state["objectives_model"], state["objectives_model_options"]
    old = Recipe.__new__(Recipe)
    old.__setstate__(state)  # a recipe pickled before the field existed
    assert old.objectives_model is None and dict(old.objectives_model_options) == {}
    again = pickle.loads(pickle.dumps(_KERNEL))
    assert again == _KERNEL and dict(again.objectives_model_options) == {"refresh": 3}


def test_mondrian_kernel_reaches_the_search_cv_and_the_optuna_sampler():
    from sklearn.datasets import load_iris
    from sklearn.svm import SVC

    from mfbo.integrations.sklearn import MondrianSearchCV

    X, y = load_iris(return_X_y=True)
    cv = MondrianSearchCV(SVC(), {"C": mfbo.Real(1e-2, 1e2, log=True)}, n_iter=6,
                          surrogate="mondrian-kernel", random_state=0).fit(X, y)
    assert len(cv.cv_results_["params"]) == 6 and cv.best_score_ > 0.9
    optuna = pytest.importorskip("optuna")
    from mfbo.integrations.optuna import MondrianSampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=MondrianSampler(surrogate="mondrian-kernel", seed=0))
    study.optimize(lambda t: (t.suggest_float("x", -2, 2) - 0.5) ** 2, n_trials=12)
    assert study.best_value < 0.1
