"""Targets of any finite float64 magnitude: every regressor, the forest's predictive density
and the error measures work at scales up to the float64 maximum (finite predictions, scaled
exactly as the targets are; inf only for a quantity itself beyond float64): never NaN, never a
bare OverflowError, never a complaint about NaN or infinite input."""

import math
import warnings

import numpy as np
import pytest

from surrogates import (BARTRegressor, MondrianForestRegressor, MondrianGrid,
                        MondrianKernelRidge, SMCDecisionTreeRegressor)
from surrogates.metrics import relative_error, rmse

#: a scale whose squares overflow float64, and one that is a power of two (so that dividing by
#: it is exact and a model scaled by it must give exactly scaled results)
BIG = 1e300
P2 = 1000  # 2^1000 is about 1.07e301


def _data(n=60, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(n)
    Q = rng.uniform(-0.2, 1.2, size=(30, d))
    return X, y, Q


def _near_max(y):
    """``y`` mapped onto +-1.7e308: its range (3.4e308) itself overflows float64."""
    u = (y - y.min()) / (y.max() - y.min())
    return (2 * u - 1) * 1.7e308


def _estimators():
    return {
        "smc": lambda: SMCDecisionTreeRegressor(n_particles=20, n_islands=2, random_state=0),
        "bart": lambda: BARTRegressor(n_trees=10, n_burn=10, n_samples=30, random_state=0),
        "bart_std": lambda: BARTRegressor(n_trees=10, n_burn=10, n_samples=30,
                                          sigma_hat="std", random_state=0),
        "grid": lambda: MondrianGrid(n_grids=5, lifetimes=2.0, random_state=0),
        "grid_ml": lambda: MondrianGrid(n_grids=5, lifetimes=2.0, prior_var="ml",
                                        random_state=0),
        "ridge_primal": lambda: MondrianKernelRidge(n_trees=10, lifetime=2.0, solver="primal",
                                                    random_state=0),
        "ridge_dual": lambda: MondrianKernelRidge(n_trees=10, lifetime=2.0, solver="dual",
                                                  random_state=0),
        "ridge_sgd": lambda: MondrianKernelRidge(n_trees=10, lifetime=2.0, solver="sgd",
                                                 random_state=0),
        "ridge_auto_prior": lambda: MondrianKernelRidge(n_trees=10, lifetime=2.0,
                                                        prior_variance="auto", random_state=0),
        "forest": lambda: MondrianForestRegressor(n_estimators=5, random_state=0),
    }


#: whose predictive std scales with the targets; the others add a prior variance given as a
#: number (1, in the targets' units squared), which does not
_STD_SCALES = {"smc", "bart", "bart_std", "grid_ml", "ridge_auto_prior", "forest"}


def _predict(model, Q):
    if isinstance(model, MondrianKernelRidge) and model.solver == "sgd":
        return model.predict(Q), None
    return model.predict(Q, return_std=True)


@pytest.mark.parametrize("name", list(_estimators()))
@pytest.mark.parametrize("factor", [BIG, math.ldexp(1.0, P2)], ids=["1e300", "2^1000"])
def test_predictions_scale_with_targets_beyond_squaring_range(name, factor):
    """Targets times 1e300 (whose squares overflow) give the predictions times 1e300."""
    X, y, Q = _data()
    make = _estimators()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way either
        mean1, std1 = _predict(make().fit(X, y), Q)
        mean, std = _predict(make().fit(X, y * factor), Q)
    assert np.all(np.isfinite(mean))
    np.testing.assert_allclose(mean / factor, mean1, rtol=1e-9, atol=1e-12)
    if std is None:
        return
    assert np.all(np.isfinite(std)) and np.all(std > 0)
    if name in _STD_SCALES:
        np.testing.assert_allclose(std / factor, std1, rtol=1e-9, atol=1e-12)
    elif name.startswith("grid"):  # a given prior_var: the std does not depend on y
        np.testing.assert_allclose(std, std1, rtol=1e-12)
    else:  # ridge: the given prior variance's part plus the spread of the weights (scales)
        assert np.all(std >= std1 * (1 - 1e-12))


@pytest.mark.parametrize("name", list(_estimators()))
def test_targets_near_the_float_maximum_give_finite_predictions(name):
    """Targets of +-1.7e308, whose range overflows float64, are still fitted: the model is
    the one of the targets divided by 2^900, its predictions times 2^900 -- finite means
    that follow the data; a standard deviation is inf only where it exceeds float64."""
    X, y, Q = _data()
    Y = _near_max(y)
    make = _estimators()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = make().fit(X, Y)
        mean, std = _predict(model, Q)
        fit, _ = _predict(model, X)
        ref_mean, ref_std = _predict(make().fit(X, np.ldexp(Y, -900)), Q)
    assert np.all(np.isfinite(mean)) and np.all(np.abs(mean) <= 1.7e308)
    np.testing.assert_allclose(np.ldexp(mean, -900), ref_mean, rtol=1e-9)
    assert np.corrcoef(fit / 1e308, Y / 1e308)[0, 1] > 0.5
    if std is None:
        return
    assert not np.any(np.isnan(std)) and np.all(std > 0)
    if name in _STD_SCALES:
        with np.errstate(over="ignore"):
            np.testing.assert_allclose(std, np.ldexp(ref_std, 900), rtol=1e-9)
    else:
        assert np.all(np.isfinite(std))


def test_bart_reports_what_it_can_and_infinity_for_variances_beyond_float64():
    """BART's noise variances are in units of y squared: beyond float64 they are inf (the
    nearest float64), while the means, offsets and log likelihoods stay finite."""
    X, y, Q = _data()
    kw = dict(n_trees=10, n_burn=10, n_samples=30, random_state=0)
    a = BARTRegressor(**kw).fit(X, y)
    b = BARTRegressor(**kw).fit(X, np.ldexp(y, P2))
    assert b.y_offset_ == math.ldexp(a.y_offset_, P2)
    assert b.y_scale_ == math.ldexp(a.y_scale_, P2)
    assert np.all(np.isinf(b.sigma2_samples_)) and np.all(np.isinf(b.sigma2_trace_))
    np.testing.assert_allclose(b.loglik_trace_, a.loglik_trace_ - X.shape[0] * P2 * np.log(2),
                               rtol=1e-12)
    np.testing.assert_array_equal(b.predict_samples(Q), np.ldexp(a.predict_samples(Q), P2))
    for lo_a, lo_b in zip(a.predict_interval(Q), b.predict_interval(Q)):
        np.testing.assert_allclose(np.ldexp(lo_a, P2), lo_b, rtol=1e-9)
    # a numeric sigma_hat is in the targets' units
    c = BARTRegressor(sigma_hat=0.2, **kw).fit(X, y)
    d = BARTRegressor(sigma_hat=math.ldexp(0.2, P2), **kw).fit(X, np.ldexp(y, P2))
    np.testing.assert_allclose(d.predict(Q), np.ldexp(c.predict(Q), P2), rtol=1e-12)


def test_smc_standardisation_of_huge_targets_is_exact():
    X, y, Q = _data()
    a = SMCDecisionTreeRegressor(n_particles=20, n_islands=2, random_state=0).fit(X, y)
    b = SMCDecisionTreeRegressor(n_particles=20, n_islands=2, random_state=0).fit(
        X, np.ldexp(y, P2))
    assert b.y_mean_ == math.ldexp(a.y_mean_, P2) and b.y_scale_ == math.ldexp(a.y_scale_, P2)
    np.testing.assert_array_equal(b.log_evidence_, a.log_evidence_)
    (ma, sa), (mb, sb) = a.predict(Q, return_std=True), b.predict(Q, return_std=True)
    np.testing.assert_array_equal(mb, np.ldexp(ma, P2))
    np.testing.assert_array_equal(sb, np.ldexp(sa, P2))


@pytest.mark.parametrize("prior_var", [1.0, "ml"])
def test_grid_marginal_likelihood_and_search_with_huge_targets(prior_var):
    X, y, Q = _data()
    kw = dict(n_grids=5, lifetimes=1.0, prior_var=prior_var, random_state=0)
    a = MondrianGrid(**kw).fit(X, y)
    b = MondrianGrid(**kw).fit(X, np.ldexp(y, P2))
    assert b.intercept_ == math.ldexp(a.intercept_, P2)
    np.testing.assert_allclose(b.coef_, np.ldexp(a.coef_, P2), rtol=1e-12)
    if prior_var == "ml":  # the density of y 2^1000 is 2^-1000N that of y
        np.testing.assert_allclose(b.log_marginal_likelihood_, a.log_marginal_likelihood_
                                   - X.shape[0] * P2 * np.log(2), rtol=1e-12)
    else:  # the quadratic term is about -1e600: below float64
        assert b.log_marginal_likelihood_ == -np.inf
    ea = a.explore(Q[:15], y[:15], max_steps=3)
    eb = b.explore(Q[:15], np.ldexp(y[:15], P2), max_steps=3)
    np.testing.assert_array_equal(ea.lifetimes, eb.lifetimes)
    np.testing.assert_allclose(np.ldexp(ea.val_rmse, P2), eb.val_rmse, rtol=1e-12)
    np.testing.assert_allclose(np.ldexp(ea.train_rmse, P2), eb.train_rmse, rtol=1e-12)
    assert b.increase(0) == a.increase(0)
    np.testing.assert_allclose(b.predict(Q), np.ldexp(a.predict(Q), P2), rtol=1e-12)


@pytest.mark.parametrize("solver", ["primal", "dual", "sgd"])
def test_ridge_partial_fit_with_targets_far_larger_than_before(solver):
    """A huge target arriving online rescales the stored ones: the model is, up to the exact
    power-of-two factor, the one that saw the same targets all at ordinary scale."""
    X, y, Q = _data(80)
    kw = dict(n_trees=10, lifetime=2.0, solver=solver, prior_variance="auto", random_state=0)
    a = MondrianKernelRidge(**kw).fit(X[:50], np.ldexp(y[:50], -P2))
    b = MondrianKernelRidge(**kw).fit(X[:50], y[:50])
    a.partial_fit(X[50:], y[50:])
    b.partial_fit(X[50:], np.ldexp(y[50:], P2))
    np.testing.assert_allclose(b.predict(Q), np.ldexp(a.predict(Q), P2), rtol=1e-9)
    np.testing.assert_allclose(b.coef_, np.ldexp(a.coef_, P2), rtol=1e-9, atol=1e-300)
    assert b.intercept_ == pytest.approx(math.ldexp(a.intercept_, P2), rel=1e-12)
    if solver != "sgd":
        np.testing.assert_allclose(b.predict(Q, return_std=True)[1],
                                   np.ldexp(a.predict(Q, return_std=True)[1], P2), rtol=1e-9)
        np.testing.assert_allclose(b.log_marginal_likelihood_, a.log_marginal_likelihood_
                                   - X.shape[0] * P2 * np.log(2), rtol=1e-12)


# -- the forest's predictive density ---------------------------------------------------------
def test_forest_log_density_of_targets_far_from_the_prediction_is_never_nan():
    """A target 1e154 or more from the prediction (ordinary model) has a log density below
    -1e307 standard deviations squared: -inf where it is beyond float64, never NaN."""
    X, y, Q = _data(100)
    m = MondrianForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    far = np.array([1e150, 1e154, -1e154, 1e200, 1e308, -1.7e308, 1.7e308])
    lp = m.predictive_log_pdf(Q[:far.shape[0]], far)
    assert not np.any(np.isnan(lp))
    assert np.isfinite(lp[0]) and lp[0] < -1e299
    assert np.all(lp[3:] == -np.inf)
    assert m.nlpd(Q[:far.shape[0]], far) == np.inf
    assert np.isfinite(m.nlpd(Q[:3], y[:3]))


@pytest.mark.parametrize("posterior", ["empirical", "bp"])
def test_forest_log_density_is_finite_where_float64_can_hold_it(posterior):
    """Targets 2^520 from the prediction of a forest on targets times 2^100: the squared
    distance overflows, the density (about -1e252) does not; it is the ordinary forest's
    density at 2^420, shifted by -100 log 2."""
    X, y, Q = _data(100)
    kw = dict(n_estimators=5, posterior=posterior, random_state=0)
    a = MondrianForestRegressor(**kw).fit(X, y)
    b = MondrianForestRegressor(**kw).fit(X, np.ldexp(y, 100))
    t = np.ldexp(np.linspace(1.0, 1.9, 10), 420) * np.where(np.arange(10) % 2, 1, -1)
    la = a.predictive_log_pdf(Q[:10], t)
    lb = b.predictive_log_pdf(Q[:10], np.ldexp(t, 100))
    assert np.all(np.isfinite(la)) and np.all(la < -1e200)
    np.testing.assert_allclose(lb, la - 100 * np.log(2), rtol=1e-12)


def test_nlpd_of_log_densities_near_the_float_minimum_is_their_finite_mean():
    """Each log density about -1.5e308 is finite; so is their mean (a plain sum overflows)."""
    X, y, Q = _data(100)
    m = MondrianForestRegressor(n_estimators=5, random_state=0).fit(X, np.ldexp(y, 100))
    t = m.predict(Q[:4])
    lp0 = m.predictive_log_pdf(Q[:4], t + np.ldexp(1.0, 540))
    # scale the distance so that every log density is near -1.5e308
    d = np.ldexp(1.0, 540) * np.sqrt(1.5e308 / -lp0)
    lp = m.predictive_log_pdf(Q[:4], t + d)
    assert np.all(np.isfinite(lp)) and np.all(lp < -1e308)
    nlpd = m.nlpd(Q[:4], t + d)
    assert np.isfinite(nlpd) and nlpd == pytest.approx(-np.sum(lp / 4), rel=1e-12)


# -- error measures --------------------------------------------------------------------------
def test_error_measures_of_huge_targets_are_finite_and_scale_equivariant():
    rng = np.random.default_rng(0)
    y = rng.standard_normal(50)
    p = y + 0.1 * rng.standard_normal(50)
    for c in (BIG, 1.7e308 / np.abs(np.r_[y, p]).max()):
        assert rmse(y * c, p * c) == pytest.approx(c * rmse(y, p), rel=1e-12)
        assert relative_error(y * c, p * c) == pytest.approx(relative_error(y, p), rel=1e-12)
    # errors whose squares overflow, while the result is representable
    assert rmse([8e307, -8e307], [-8e307, 8e307]) == pytest.approx(1.6e308, rel=1e-12)


def test_error_measures_of_ordinary_values_are_unchanged():
    y = np.array([1.0, 2.0, 3.5])
    p = np.array([1.5, 1.0, 3.0])
    assert rmse(y, p) == float(np.sqrt(np.mean((p - y) * (p - y))))
    assert relative_error(y, p) == float(100.0 * np.linalg.norm(p - y) / np.linalg.norm(y))
