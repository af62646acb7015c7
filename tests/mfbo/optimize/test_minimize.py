"""minimize, the decorator, results, plots, failures, parallel executors (process pool, Dask),
and its timeout (no trial is asked once the time is up; the evaluations running then finish
and are told)."""

import os
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import mfbo
from mfbo import Integer, objective
from tests.support import SPACE, quad


def flaky(x, y):
    if x > 0.5:
        raise RuntimeError("diverged")
    if y > 0.5:
        return float("nan")
    return {"loss": quad(x, y), "pid": os.getpid()}


def test_minimize_result_dataframe_and_plots(tmp_path):
    r = mfbo.minimize(quad, SPACE, n_calls=15, random_state=0, progress_bar=False)
    assert len(r.trials) == 15 and r.best_value == min(r.func_vals)
    assert r.best_params == r.best_trial.params
    df = r.to_dataframe()
    assert list(df.columns[:6]) == ["id", "x", "y", "value", "state", "error"]
    assert {"start", "end", "duration", "worker"} <= set(df.columns) and len(df) == 15
    assert np.all(np.diff(r.best_so_far()) <= 0)
    for name, fn in (("conv.png", r.plot_convergence), ("eval.png", r.plot_evaluations)):
        fn(tmp_path / name)  # returns the Figure, and saves it when given a path
        with open(tmp_path / name, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


def test_failures_never_stop_the_loop():
    r = mfbo.minimize(flaky, SPACE, n_calls=20, random_state=1, progress_bar=False,
                      n_initial=8)
    states = [t.state for t in r.trials]
    assert len(states) == 20 and "failed" in states and "complete" in states
    errors = {t.error.split(":")[0] for t in r.trials if t.state == "failed"}
    assert errors <= {"RuntimeError", "objective returned a non-finite loss (nan)"}
    assert all("pid" in t.extra for t in r.trials if t.state == "complete")
    assert r.n_failed == states.count("failed")


def test_decorator():
    @objective(x=(-1.0, 1.0), n=Integer(0, 5))
    def f(x, n):
        return (x - 0.1) ** 2 + (n - 2) ** 2

    assert f(0.1, 2) == 0.0 and f.__name__ == "f"
    r = f.minimize(n_calls=20, random_state=0, progress_bar=False)
    assert r.best_value < 1.0 and set(r.best_params) == {"x", "n"}

    @objective({"a": (0.0, 1.0)})
    def g(a):
        return a

    assert g.minimize(n_calls=5, random_state=0, progress_bar=False).best_value < 0.5
    with pytest.raises(ValueError, match="no parameter"):
        objective(z=(0.0, 1.0))(lambda x: x)


def test_callbacks_can_stop_and_progress_bar(capsys):
    seen = []

    def cb(trial, opt):
        seen.append(trial.id)
        return len(seen) >= 4

    r = mfbo.minimize(quad, SPACE, n_calls=30, random_state=0, callbacks=[cb])
    assert len(r.trials) == 4 and seen == [0, 1, 2, 3]
    assert "best=" in capsys.readouterr().err


def test_progress_bar_says_when_the_forest_kernels_compile(monkeypatch, capsys):
    # numba raises a compile event when it compiles (not when it loads its cache): faked here
    # in the second ask (for the user's kernel, then one of the surrogates') and tell
    from numba import njit
    from numba.core import event

    from mfbo.optimize.minimize import COMPILING
    from mfbo.optimize.optimizer import Optimizer
    from surrogates._core._tree_kernels import scale_rows

    users_kernel = njit(lambda x: x)
    calls, seen = [], []

    def compiling(method):
        def call(self, *args, **kwargs):
            calls.append(method.__name__)
            kernels = {3: (users_kernel, scale_rows), 4: (scale_rows,)}.get(len(calls), ())
            for kernel in kernels:
                with event.trigger_event("numba:compile", data={"dispatcher": kernel}):
                    seen.append(capsys.readouterr().err.rsplit("\r", 1)[-1])
            return method(self, *args, **kwargs)
        return call

    monkeypatch.setattr(Optimizer, "ask", compiling(Optimizer.ask))
    monkeypatch.setattr(Optimizer, "tell", compiling(Optimizer.tell))
    mfbo.minimize(quad, SPACE, n_calls=5, random_state=0)
    assert calls[2:4] == ["ask", "tell"] and len(seen) == 3
    assert seen[0].startswith("mfbo:")  # the user's kernel is not the forest's
    assert seen[1].startswith(COMPILING) and seen[2].startswith(COMPILING)
    after = capsys.readouterr().err.split("\r")
    assert after[-1].startswith("mfbo:") and all(COMPILING not in line for line in after[1:])


@pytest.mark.parametrize("kwargs, match", [
    ({"n_calls": 0}, "n_calls"), ({"n_workers": 0}, "n_workers"),
    ({"callbacks": [3]}, "callbacks"), ({"executor": object()}, "executor"),
])
def test_minimize_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        mfbo.minimize(quad, SPACE, progress_bar=False, **{"n_calls": 5, **kwargs})


def test_process_pool_workers():
    r = mfbo.minimize(flaky, SPACE, n_calls=16, n_workers=2, random_state=0,
                      progress_bar=False)
    assert len(r.trials) == 16 and all(t.state != "pending" for t in r.trials)
    pids = {t.extra["pid"] for t in r.trials if t.state == "complete"}
    assert os.getpid() not in pids and len(pids) >= 1
    assert len({tuple(t.params.values()) for t in r.trials}) == 16


def test_given_executor_is_not_shut_down():
    with ThreadPoolExecutor(3) as ex:
        r = mfbo.minimize(quad, SPACE, n_calls=9, executor=ex, n_workers=3, random_state=0,
                          progress_bar=False)
        assert ex.submit(lambda: 1).result() == 1
    assert len(r.trials) == 9


def test_dask_local_cluster_executor():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        r = mfbo.minimize(flaky, SPACE, n_calls=10, n_workers=2,
                          executor=client.get_executor(), random_state=0, progress_bar=False)
    assert len(r.trials) == 10 and all(t.state != "pending" for t in r.trials)
    assert any(t.state == "complete" for t in r.trials)


def test_unpicklable_objective_in_process_pool_is_refused_up_front(tmp_path):
    # it used to burn the whole budget as PicklingError failures
    db = tmp_path / "s.db"
    with pytest.raises(TypeError, match="f must be picklable"):
        mfbo.minimize(lambda x, y: x, SPACE, n_calls=3, n_workers=2, random_state=0,
                      progress_bar=False, storage=str(db))
    assert not db.exists()  # refused before the study was created


def test_plots_keep_the_backend_and_place_any_categorical(tmp_path):
    import matplotlib
    before = matplotlib.get_backend()
    space = {"x": (0.0, 1.0), "c": mfbo.Categorical([3, None, "z"])}  # not only strings
    r = mfbo.minimize(lambda x, c: x + (c == "z"), space, n_calls=8, random_state=0,
                      progress_bar=False)
    r.plot_evaluations(tmp_path / "e.png")
    mfbo.plot_convergence([r.best_so_far()], tmp_path / "c.png")
    assert matplotlib.get_backend() == before
    assert (tmp_path / "e.png").stat().st_size > 0


def returns_score(x, y):
    return {"score": x}


def returns_pair(x, y):
    return (x, y)


def returns_text(x, y):
    return str(x)


@pytest.mark.parametrize("f", [returns_score, returns_pair, returns_text])
def test_an_objective_return_tell_refuses_is_a_failed_trial_and_one_warning(f, recwarn):
    r = mfbo.minimize(f, SPACE, n_calls=6, surrogate="random", random_state=0,
                      progress_bar=False)
    assert len(r.trials) == 6 and all(t.state == "failed" and t.error for t in r.trials)
    assert r.best_value is None
    messages = [str(w.message) for w in recwarn if issubclass(w.category, UserWarning)]
    bad = [m for m in messages if "expected a number, or a dict with a 'loss' key" in m]
    assert len(bad) == 1  # once per kind of return, not once per trial
    assert type(f(0.5, 0.5)).__name__ in bad[0]
    none = [m for m in messages if "no trial succeeded" in m]
    assert len(none) == 1 and r.trials[0].error in none[0]


def test_an_error_of_the_surrogate_update_is_raised_not_blamed_on_the_return(monkeypatch,
                                                                              tmp_path):
    from mfbo.proposal.proposer import Proposer

    observe = Proposer.observe

    def broken(self, study):
        if study.n_finished:
            raise ValueError("the model's update broke")
        return observe(self, study)

    monkeypatch.setattr(Proposer, "observe", broken)
    db = str(tmp_path / "s.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning about the objective's return
        with pytest.raises(ValueError, match="the model's update broke"):
            mfbo.minimize(lambda x, y: x + y, SPACE, n_calls=4, random_state=0,
                          storage=db, progress_bar=False)
    study = mfbo.Study.open(db)  # the evaluation that came before the error is kept
    assert [t.state for t in study.trials] == ["complete"]


def test_a_bad_return_in_worker_processes_is_a_failed_trial_too(tmp_path):
    db = str(tmp_path / "s.db")
    with pytest.warns(UserWarning, match="the objective returned a tuple"):
        r = mfbo.minimize(returns_pair, SPACE, n_calls=4, n_workers=2, surrogate="random",
                          random_state=0, progress_bar=False, storage=db)
    assert len(r.trials) == 4 and r.n_failed == 4
    assert mfbo.Study.open(db).n_finished == 4


def test_some_failures_do_not_warn_that_no_trial_succeeded(recwarn):
    mfbo.minimize(flaky, SPACE, n_calls=12, random_state=1, progress_bar=False, n_initial=8)
    assert not [w for w in recwarn if "no trial succeeded" in str(w.message)]


def test_running_out_of_proposals_warns_how_far_the_study_got():
    with pytest.warns(UserWarning, match=r"stopped early.*no point at least min_distance=0\.9"
                                         r".* finished trials? of n_calls=10"):
        r = mfbo.minimize(lambda x: x, {"x": (0.0, 1.0)}, n_calls=10, min_distance=0.9,
                          surrogate="random", random_state=0, progress_bar=False)
    assert 1 <= len(r.trials) < 10


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
