"""Estimators used from several Python threads at once, on numba's workqueue threading layer
(the one numba falls back to without OpenMP or TBB), which aborts the process when two
threads launch parallel kernels at the same time unless the launches are serialised."""

import json


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
