"""Estimators pickled by version 0.1 (flat module layout: ``surrogates.regressor``,
``surrogates._tree``, ``surrogates.kernel`` ...) load and predict as they did.  The pickles and
their predictions were written by ``pickles_v0_1/make.py`` under 0.1."""

import importlib
import os
import pickle

import numpy as np
import pytest

import surrogates

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pickles_v0_1")
NAMES = ["regressor", "regressor_bp", "classifier", "kernel", "kernel_ridge", "grid", "laplace",
         "fourier", "binning"]


@pytest.mark.parametrize("name", NAMES)
def test_a_pickle_of_version_0_1_loads_and_predicts_the_same(name):
    expected = np.load(os.path.join(HERE, "expected.npz"))
    with open(os.path.join(HERE, f"{name}.pkl"), "rb") as fh:
        model = pickle.load(fh)
    Xq = expected["Xq"]
    if hasattr(model, "predict_proba"):
        got = model.predict_proba(Xq)
    elif hasattr(model, "predict"):
        got = np.asarray(model.predict(Xq))
    else:
        t = model.transform(Xq)
        got = t.toarray() if hasattr(t, "toarray") else np.asarray(t)
    np.testing.assert_array_equal(got, expected[name])
    assert type(model) is getattr(surrogates, type(model).__name__)  # the current class


@pytest.mark.parametrize("old,new", [
    ("surrogates._tree", "surrogates._core.tree"),
    ("surrogates.regressor", "surrogates.forest.regressor"),
    ("surrogates.smac_forest", "surrogates.baselines.smac_forest"),
    # moved twice: the flat 0.1 name, then the package layout's name, to the kernels module
    ("surrogates._kernel_core", "surrogates.kernel._kernels"),
    ("surrogates.kernel._core", "surrogates.kernel._kernels"),
    ("surrogates._regression", "surrogates.forest._regression_kernels"),
    ("surrogates.forest._classification", "surrogates.forest._classification_kernels"),
    ("surrogates._grid_core", "surrogates.grid._kernels"),
    ("surrogates._rng", "surrogates._core._rng_kernels"),
    ("surrogates._core.sparse", "surrogates._core._sparse_kernels"),
    ("surrogates._prefetch", "surrogates._core._prefetch_kernels"),
    ("surrogates.bayes_trees._bart_core", "surrogates.bayes_trees._bart_kernels"),
    ("surrogates.bayes_trees._smc_core", "surrogates.bayes_trees._smc_kernels"),
    ("surrogates.bayes_trees.prior", "surrogates.bayes_trees._prior_kernels")])
def test_old_module_paths_are_the_new_modules(old, new):
    module = importlib.import_module(old)
    assert module is importlib.import_module(new) and module.__spec__.name == new
