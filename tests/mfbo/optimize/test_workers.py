"""minimize with worker processes that die (os._exit, a signal): the trial that killed its
worker is a failed trial saying so, the pool is rebuilt, no other trial fails and the study
goes on to n_calls; an executor given by the user that breaks is not rebuilt."""

import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest

import mfbo
import mfbo.optimize.workers

from tests.support import SPACE, quad

#: configurations whose evaluation kills the worker process (x values no proposal repeats)
EXIT_X, KILL_X = 0.625, -0.375
#: the first configurations: one innocent, then the crasher(s), evaluated two at a time
INNOCENT = {"x": 0.25, "y": 0.0}


def dies_on_some_x(x, y):
    """``quad``, except that it exits with code 3 at ``x == EXIT_X`` and kills itself with
    SIGKILL (as the OOM killer or a segfault would) at ``x == KILL_X``; any other evaluation
    takes a moment, so innocent trials are in flight when a worker dies."""
    if x == EXIT_X:
        os._exit(3)
    if x == KILL_X:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.15)
    return quad(x, y)


def slow_at_innocent(x, y):
    """``quad``, taking longer at ``INNOCENT``."""
    time.sleep(0.6 if x == INNOCENT["x"] else 0.05)
    return quad(x, y)


def run(n_calls=8, **kwargs):
    return mfbo.minimize(dies_on_some_x, SPACE, n_calls=n_calls, n_workers=2,
                         surrogate="random", random_state=0, progress_bar=False, **kwargs)


def failed(result):
    return {t.params["x"]: t.error for t in result.trials if t.state == "failed"}


@pytest.mark.parametrize("use_storage", [False, True], ids=["memory", "sqlite"])
def test_a_worker_that_exits_fails_only_its_trial_and_the_study_goes_on(use_storage, tmp_path):
    db = str(tmp_path / "s.db") if use_storage else None
    r = run(initial_points=[INNOCENT, {"x": EXIT_X, "y": 0.0}], storage=db)
    assert len(r.trials) == 8 and all(t.state in ("complete", "failed") for t in r.trials)
    errors = failed(r)
    assert list(errors) == [EXIT_X]  # the innocent trial in flight with it completed
    assert "worker process died" in errors[EXIT_X] and "exit code 3" in errors[EXIT_X]
    assert r.trials[0].params == INNOCENT and r.trials[0].state == "complete"
    if use_storage:
        study = mfbo.Study.open(db)
        assert study.n_finished == 8
        assert [t.params["x"] for t in study.trials if t.state == "failed"] == [EXIT_X]


def test_a_worker_killed_by_a_signal_fails_only_its_trial():
    r = run(initial_points=[INNOCENT, {"x": KILL_X, "y": 0.5}])
    assert len(r.trials) == 8 and r.n_failed == 1
    assert "worker process died" in failed(r)[KILL_X] and "SIGKILL" in failed(r)[KILL_X]


def test_two_crashers_in_flight_together_are_both_found_and_nothing_else_fails(tmp_path):
    db = str(tmp_path / "s.db")
    r = run(initial_points=[{"x": EXIT_X, "y": 0.0}, {"x": KILL_X, "y": 0.0}, INNOCENT],
            storage=db)
    assert len(r.trials) == 8 and all(t.state in ("complete", "failed") for t in r.trials)
    errors = failed(r)
    assert set(errors) == {EXIT_X, KILL_X}
    assert "exit code 3" in errors[EXIT_X] and "SIGKILL" in errors[KILL_X]
    assert mfbo.Study.open(db).n_finished == 8


class KilledBetweenWaits(ProcessPoolExecutor):
    """A process pool one of whose workers is killed from outside (by an OOM killer, say)
    just before its third submit, which then finds the pool broken; ``sent`` lists the
    configurations submitted."""

    submits = 0
    sent = []

    def submit(self, fn, /, *args, **kwargs):
        KilledBetweenWaits.submits += 1
        KilledBetweenWaits.sent.append(args[1])
        if KilledBetweenWaits.submits == 3:
            os.kill(next(iter(self._processes)), signal.SIGKILL)
            deadline = time.monotonic() + 10
            while not self._broken and time.monotonic() < deadline:
                time.sleep(0.01)
        return super().submit(fn, *args, **kwargs)


def test_a_pool_broken_between_waits_is_rebuilt_and_nothing_fails(monkeypatch):
    monkeypatch.setattr(mfbo.optimize.workers, "ProcessPoolExecutor", KilledBetweenWaits)
    monkeypatch.setattr(KilledBetweenWaits, "submits", 0)
    monkeypatch.setattr(KilledBetweenWaits, "sent", [])
    # the second trial is quick: the third is submitted while the first is still running
    r = mfbo.minimize(slow_at_innocent, SPACE, n_calls=8, n_workers=2, surrogate="random",
                      random_state=0, progress_bar=False, initial_points=[INNOCENT])
    assert len(r.trials) == 8 and all(t.state == "complete" for t in r.trials)
    # the first trial was in flight when the pool broke: evaluated again, and told once
    assert KilledBetweenWaits.sent.count(INNOCENT) == 2
    # the third, refused by the broken pool, was submitted again to the new one
    assert KilledBetweenWaits.sent.count(KilledBetweenWaits.sent[2]) == 2
    assert KilledBetweenWaits.sent[2] == r.trials[2].params


def test_a_users_executor_that_breaks_is_not_rebuilt_and_the_study_stops(tmp_path):
    db = str(tmp_path / "s.db")
    with ProcessPoolExecutor(2) as pool:
        with pytest.warns(UserWarning, match=r"executor given as executor= is broken"):
            r = run(initial_points=[INNOCENT, {"x": EXIT_X, "y": 0.0}], executor=pool,
                    storage=db)
        with pytest.raises(BrokenProcessPool):
            pool.submit(quad, 0.0, 0.0)  # theirs, left as it was
    # the trials in flight were told, as failed, since which one broke the pool is unknown;
    # the study stopped (of 8 calls, the two in flight and, when the innocent one ended
    # before the pool broke, as on a loaded machine, the one submitted after it)
    assert len(r.trials) in (2, 3) and all(t.state != "pending" for t in r.trials)
    assert all("executor= broke" in t.error for t in r.trials if t.state == "failed")
    assert EXIT_X in failed(r)
    assert mfbo.Study.open(db).n_finished == len(r.trials)


def test_how_the_processes_of_a_broken_pool_ended():
    term = -signal.SIGTERM  # what the pool does to its surviving workers
    assert mfbo.optimize.workers.describe_exits([3, term]) == "exit code 3"
    assert mfbo.optimize.workers.describe_exits([-signal.SIGKILL, term, None]) == \
        "killed by signal SIGKILL"
    assert mfbo.optimize.workers.describe_exits([term, term]) == "killed by signal SIGTERM"
    assert mfbo.optimize.workers.describe_exits([None]) == ""
