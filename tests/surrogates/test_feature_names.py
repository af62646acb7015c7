"""Column names of data frames: kept at fit and checked on every later call, as scikit-learn
estimators do, so that reordered or renamed columns are never read as the wrong features."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

from surrogates import (LaplaceKernelRidge, MondrianForestClassifier, MondrianForestRegressor,
                        MondrianGrid, MondrianKernel, MondrianKernelRidge,
                        RandomBinningFeatures, RandomFourierFeatures,
                        SMACRandomForestRegressor)

ESTIMATORS = [
    MondrianForestRegressor(n_estimators=5, random_state=0),
    MondrianForestClassifier(n_estimators=5, random_state=0),
    MondrianKernel(n_trees=5, random_state=0),
    MondrianKernelRidge(n_trees=5, random_state=0),
    MondrianGrid(n_grids=3, random_state=0),
    LaplaceKernelRidge(),
    RandomFourierFeatures(n_components=5, random_state=0),
    RandomBinningFeatures(n_grids=5, random_state=0),
    SMACRandomForestRegressor(n_estimators=3, random_state=0),
]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_scikit_learn_column_name_checks(estimator):
    """scikit-learn's own check: ``feature_names_in_`` after fitting on a frame, no warning for
    the same frame, and reordered, renamed or missing columns refused by every method taking
    X, ``partial_fit`` included."""
    check_dataframe_column_names_consistency(type(estimator).__name__, estimator)


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.random((n, 3)), columns=["a", "b", "c"])
    y = 3 * df["a"].to_numpy() + np.sin(6 * df["c"].to_numpy())
    return df, y


def test_reordered_columns_are_refused_naming_the_features():
    df, y = _frame()
    m = MondrianForestRegressor(random_state=0).fit(df[["a", "b", "c"]], y)
    np.testing.assert_array_equal(m.feature_names_in_, ["a", "b", "c"])
    assert m.feature_names_in_.dtype == object
    before = m.predict(df[["a", "b", "c"]], return_std=True)
    for method in (m.predict, m.predict_per_tree, m.apply):
        with pytest.raises(ValueError, match=r"same order(.|\n)*\['c', 'b', 'a'\].*\['a', 'b', "
                                             r"'c'\]"):
            method(df[["c", "b", "a"]])
    with pytest.raises(ValueError, match="unseen at fit time:\n- d\n"):
        m.predict(df.rename(columns={"a": "d"}))
    with pytest.raises(ValueError, match="feature names should match"):
        m.score(df[["c", "b", "a"]], y)
    np.testing.assert_array_equal(before, m.predict(df, return_std=True))


@pytest.mark.parametrize("make", [
    lambda: MondrianForestRegressor(min_samples_split=2, random_state=0),
    lambda: MondrianForestClassifier(n_estimators=5, random_state=0)])
def test_partial_fit_with_reordered_columns_changes_nothing(make):
    df, y = _frame()
    if isinstance(make(), MondrianForestClassifier):
        y = (y > np.median(y)).astype(int)
    m = make().fit(df[:100], y[:100])
    s = m._store
    arrays = {k: getattr(s, k).copy() for k in ("inode", "fnode", "box", "stats", "rng", "meta")}
    with pytest.raises(ValueError, match="same order as they were in fit"):
        m.partial_fit(df[["c", "b", "a"]][100:110], y[100:110])
    assert m.n_samples_seen_ == 100
    for k, v in arrays.items():
        np.testing.assert_array_equal(v, getattr(m._store, k), err_msg=k)
    m.partial_fit(df[100:110], y[100:110])  # the right order goes in
    assert m.n_samples_seen_ == 110


def test_arrays_and_frames_mixed_warn_as_in_scikit_learn():
    df, y = _frame()
    named = MondrianForestRegressor(random_state=0).fit(df, y)
    with pytest.warns(UserWarning, match="X does not have valid feature names, but "
                                         "MondrianForestRegressor was fitted with feature names"):
        named.predict(df.to_numpy())
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        named.partial_fit(df.to_numpy()[:2], y[:2])
    plain = MondrianForestRegressor(random_state=0).fit(df.to_numpy(), y)
    assert not hasattr(plain, "feature_names_in_")
    with pytest.warns(UserWarning, match="X has feature names, but MondrianForestRegressor was "
                                         "fitted without feature names"):
        plain.predict(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain.predict(df.to_numpy())  # no names on either side: silent
        named.predict(df)
    # a refit on unnamed data forgets the names of the earlier fit
    named.fit(df.to_numpy(), y)
    assert not hasattr(named, "feature_names_in_")


def test_kernel_ridge_unlabelled_rows_must_have_the_training_columns():
    df, y = _frame(120)
    m = MondrianKernelRidge(n_trees=5, random_state=0)
    with pytest.raises(ValueError, match="X_unlabeled has columns"):
        m.fit(df[:80], y[:80], X_unlabeled=df[["b", "a", "c"]][80:])
    assert not hasattr(m, "feature_names_in_")
    m.fit(df[:80], y[:80], X_unlabeled=df[80:])
    np.testing.assert_array_equal(m.feature_names_in_, ["a", "b", "c"])
