"""Estimators used from several Python threads at once, on numba's workqueue threading layer
(the one numba falls back to without OpenMP or TBB), which aborts the process when two
threads launch parallel kernels at the same time unless the launches are serialised."""

import json
import textwrap

from tests.support import RECORD_COMPILES


def test_parallel_kernels_from_several_threads_on_the_workqueue_layer(python_run):
    proc = python_run("""
        import json, threading
        import numpy as np
        import numba
        from surrogates import (MondrianForestClassifier, MondrianForestRegressor,
                                MondrianKernelRidge)

        errors = []

        def work(seed):
            try:
                rng = np.random.default_rng(seed)
                X = rng.random((300, 3))
                y = X[:, 0] + np.sin(6 * X[:, 1])
                for _ in range(3):
                    f = MondrianForestRegressor(n_estimators=4, random_state=seed).fit(X, y)
                    for i in range(40):
                        f.partial_fit(X[i:i + 1], y[i:i + 1])
                    f.predict(rng.random((600, 3)), return_std=True)
                    f.set_params(posterior="bp").predict(rng.random((600, 3)))
                    c = MondrianForestClassifier(n_estimators=4, random_state=seed)
                    c.fit(X, (y > y.mean()).astype(int)).predict_proba(X)
                    MondrianKernelRidge(n_trees=8, random_state=seed).fit(X, y).predict(X)
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(json.dumps({"errors": errors, "layer": numba.threading_layer()}))
    """, 900, NUMBA_THREADING_LAYER="workqueue")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"errors": [], "layer": "workqueue"}


def test_a_forest_passing_the_thread_threshold_compiles_nothing_more(python_run, tmp_path):
    """A small forest runs its kernels on one thread, a large one splits them over the thread
    pool: the same compiled kernels, so a BO whose forest grows past the threshold compiles
    nothing mid-run, and the threaded numbers are the serial ones, bit for bit."""
    proc = python_run(textwrap.dedent("""
        import json
        import numpy as np
        import surrogates._core.tree as tree
        import surrogates.forest.regressor as regressor
        from surrogates import MondrianForestRegressor
    """) + RECORD_COMPILES + textwrap.dedent("""
        rng = np.random.default_rng(0)
        X = rng.random((400, 3))
        y = X[:, 0] + np.sin(6 * X[:, 1])
        Q = rng.random((300, 3))

        def run(posterior, threads):
            # every kernel on the thread pool, or every kernel on the calling thread
            tree.THREADS_FROM = regressor.PARALLEL_FROM = regressor.SERIAL_BELOW = (
                0 if threads else 10 ** 9)
            f = MondrianForestRegressor(n_estimators=10, posterior=posterior, random_state=0)
            f.fit(X[:30], y[:30]).predict(Q[:5])
            for i in range(30, 400, 10):
                f.partial_fit(X[i:i + 10], y[i:i + 10])
            f.fit(X, y)
            f.partial_fit(X[:1] + 0.01, y[:1])
            return f.predict(Q, return_std=True)

        serial = {p: run(p, False) for p in ("empirical", "bp")}  # compiles (empty cache)
        event.register("numba:compile", Listener())
        threaded = {p: run(p, True) for p in ("empirical", "bp")}
        same = all(np.array_equal(a, b) for p in serial for a, b in zip(serial[p], threaded[p]))
        print(json.dumps({"compiled": compiled, "same": same}))
    """), 900, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"compiled": [], "same": True}
