"""minimize(timeout=...): no trial is asked once the time is up; the evaluations running then
finish and are told."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import mfbo

from tests.support import SPACE, quad


def slow_quad(x, y):
    time.sleep(0.1)
    return quad(x, y)


@pytest.mark.parametrize("workers", [
    {}, {"n_workers": 2}, {"n_workers": 3, "executor": "threads"}], ids=["serial", "processes",
                                                                         "threads"])
def test_timeout_stops_asking_and_loses_nothing(workers, tmp_path):
    db = str(tmp_path / "s.db")
    kwargs = dict(workers)
    pool = ThreadPoolExecutor(3) if kwargs.get("executor") == "threads" else None
    if pool is not None:
        kwargs["executor"] = pool
    try:
        r = mfbo.minimize(slow_quad, SPACE, n_calls=200, timeout=0.6, storage=db,
                          random_state=0, progress_bar=False, **kwargs)
    finally:
        if pool is not None:
            pool.shutdown()
    n = len(r.trials)
    assert 1 <= n < 200
    assert all(t.state == "complete" for t in r.trials)  # every trial asked was told
    # and every one is in the journal
    assert mfbo.Study.open(db).n_finished == n
    # the study goes on where it stopped
    more = mfbo.minimize(slow_quad, SPACE, n_calls=n + 2, storage=db, random_state=0,
                         progress_bar=False)
    assert len(more.trials) == n + 2


@pytest.mark.parametrize("timeout", [0, -1.0, float("inf"), float("nan"), "10", True])
def test_a_bad_timeout_is_refused(timeout):
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        mfbo.minimize(quad, SPACE, n_calls=3, timeout=timeout, progress_bar=False)
