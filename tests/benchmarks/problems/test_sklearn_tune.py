"""The ``sklearn-tune`` suite: the hold-out loss and how the data sets are subsampled and
standardised."""

import numpy as np
import pytest

from benchmarks.problems import sklearn_tune
from benchmarks.problems.problems import get_problem
from tests.support import have_data


#: the data file each non-bundled data set is read from, and whether it is here
_FILES = {"california": "cal_housing.data", "magic04": "magic04.data", "cpu_act": "cpu_act.csv"}
_HAVE = {dataset: have_data(file) for dataset, file in _FILES.items()}
HAVE_CAL = _HAVE["california"]


def test_holdout_loss_is_the_other_twenty_percent():
    obj = get_problem("sklearn-linear-wine-acc").objective
    params = {"C": 1.0, "intercept_scaling": 1.0}
    X, Xt, y, yt = obj.load()._split
    assert len(Xt) == 36 and len(X) == 142
    loss = obj.holdout_loss(params)
    assert 0.0 <= loss <= 1.0 and loss * 36 == pytest.approx(round(loss * 36))


def test_digits_is_subsampled_and_california_standardised():
    X, y = sklearn_tune.load_dataset("digits")
    assert X.shape == (1000, 64) and set(np.unique(y)) == set(range(10))
    if HAVE_CAL:
        X, y = sklearn_tune.load_dataset("california")
        assert X.shape == (2000, 8) and np.allclose(np.median(X, axis=0), 0.0)
        assert abs(np.median(y)) < 1e-12


@pytest.mark.skipif(not (_HAVE["magic04"] and _HAVE["cpu_act"]),
                    reason="magic04.data / cpu_act.csv not found: set MFBO_DATA_DIR "
                           "(CI uses ../shared/data)")
def test_magic04_and_cpu_act_are_subsampled_and_standardised():
    X, y = sklearn_tune.load_dataset("magic04")
    # 2,000 rows; the class letters g / h become labels 0 / 1, which are not standardised
    assert X.shape == (2000, 10) and y.dtype == np.int64 and set(np.unique(y)) == {0, 1}
    assert np.allclose(np.median(X, axis=0), 0.0)
    X, y = sklearn_tune.load_dataset("cpu_act")
    assert X.shape == (2000, 21) and abs(np.median(y)) < 1e-12
    # the same rows every time
    X2, y2 = sklearn_tune.load_dataset("cpu_act")
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
