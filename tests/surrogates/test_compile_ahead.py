"""Compiling kernels ahead in a second process: the signatures sent are those the forests
call the kernels with, a fresh install loads them from the cache the second process wrote
(and computes the same numbers), and nothing waits where nothing was sent."""

import json
import os
import sys
import time

import numpy as np
import pytest

from surrogates import MondrianForestRegressor
from surrogates._core import compile_ahead
from surrogates._core._tree_kernels import extend_tree_range, restat_tree_range
from surrogates.forest._regression_kernels import bp_tree_range, forest_moments_range
from surrogates.forest.regressor import _later_signatures


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def test_the_signatures_sent_are_those_the_regressor_calls_the_kernels_with():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 3))
    y = X.sum(axis=1)
    m = MondrianForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    m.predict(X)
    m.partial_fit(X[:2], y[:2])
    m.refit_targets(np.concatenate([y, y[:2]]) * 2.0)
    m.set_params(posterior="bp").predict(X)
    for kernel, sig in _later_signatures().items():
        assert tuple(sig) in [tuple(s) for s in kernel.signatures], kernel.py_func.__name__
    jobs, meanwhile = MondrianForestRegressor()._kernels_needed_later()
    assert [k for k, _ in jobs] == [forest_moments_range, extend_tree_range]
    assert [k for k, _ in meanwhile] == [restat_tree_range]
    jobs, _ = MondrianForestRegressor(posterior="bp")._kernels_needed_later()
    assert jobs[0][0] is bp_tree_range


def test_nothing_is_sent_that_is_compiled_here_and_ready_does_not_wait():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(30, 2))
    MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, X[:, 0]).predict(X)
    before = dict(compile_ahead._pending)
    compile_ahead.start([(forest_moments_range, _later_signatures()[forest_moments_range])])
    assert compile_ahead._pending == before
    t = time.perf_counter()
    compile_ahead.ready(forest_moments_range, extend_tree_range)
    assert time.perf_counter() - t < 0.5


def test_a_bad_posterior_is_refused_before_anything_starts():
    with pytest.raises(ValueError, match="posterior"):
        MondrianForestRegressor(posterior="exact").compile_kernels_ahead()


_COLD = """
    import json, os, sys
    import numpy as np
    from surrogates import MondrianForestRegressor
    from surrogates._core import compile_ahead
    if os.environ.get("SECOND") == "interpreter":
        compile_ahead._can_fork = lambda: False
    from surrogates.forest._regression_kernels import forest_moments_range
    from surrogates._core._tree_kernels import extend_tree_range, restat_tree_range
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 3))
    y = np.sin(3 * X).sum(axis=1)
    m = MondrianForestRegressor(n_estimators=4, random_state=0).fit(X[:150], y[:150])
    sent = sorted(compile_ahead._pending)
    mean, std = m.predict(X, return_std=True)
    m.partial_fit(X[150:], y[150:])
    mean2 = m.predict(X)
    print(json.dumps({"sent": sent, "mean": mean.tolist(), "std": std.tolist(),
                      "mean2": mean2.tolist(),
                      "loaded": [sum(k.stats.cache_hits.values())
                                 for k in (forest_moments_range, extend_tree_range)],
                      "compiled": [sum(k.stats.cache_misses.values())
                                   for k in (forest_moments_range, extend_tree_range)]}))
    """


def test_a_fresh_install_loads_what_the_second_process_compiled(python_run, tmp_path):
    # processes on an empty cache with the second process (a copy of the first, or a new
    # interpreter) and without it: the same numbers
    runs = {}
    for ahead, second in (("1", "fork"), ("1", "interpreter"), ("0", "")):
        cache = tmp_path / f"cache{ahead}{second}"
        cache.mkdir()
        proc = python_run(_COLD, 600, NUMBA_CACHE_DIR=str(cache),
                          SURROGATES_COMPILE_AHEAD=ahead, SECOND=second)
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[second] = json.loads(proc.stdout.strip().splitlines()[-1])
    for second in ("fork", "interpreter"):
        for key in ("mean", "std", "mean2"):
            assert runs[second][key] == runs[""][key]
    assert runs[""]["sent"] == [] and runs[""]["loaded"] == [0, 0]
    if _cores() < 2:
        pytest.skip("one core: nothing is compiled ahead (checked: same numbers)")
    for second in ("fork", "interpreter"):
        assert runs[second]["sent"] == sorted(f"{k.py_func.__module__}:{k.py_func.__name__}"
                                              for k in (forest_moments_range, extend_tree_range))
        # the prediction and update kernels came from the cache the second process wrote
        assert runs[second]["loaded"] == [1, 1] and runs[second]["compiled"] == [0, 0]


def test_a_process_with_several_threads_starts_a_new_interpreter():
    import threading

    assert compile_ahead._can_fork() == (hasattr(os, "fork") and threading.active_count() == 1
                                         and sys.platform.startswith("linux"))
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not compile_ahead._can_fork()
    finally:
        stop.set()
        t.join()
