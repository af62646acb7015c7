"""numba's on-disk cache shared by several processes: processes that compile the same
kernels at once into one empty ``NUMBA_CACHE_DIR`` neither crash nor corrupt it, and a later
process loads every kernel from it (compiles nothing) and computes the same numbers."""

import json
import subprocess
import sys
import textwrap

from tests.support import checkout_env, ROOT

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    from numba.core import event
    from surrogates import MondrianForestRegressor

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = X[:, 0] + np.sin(5 * X[:, 1])
    f = MondrianForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    f.partial_fit(X[:3] + 0.1, y[:3])
    mean, std = f.predict(rng.random((50, 3)), return_std=True)
    print(json.dumps({"compiled": len(compiled), "mean": mean.tolist(), "std": std.tolist()}))
""")


def _start(cache):
    return subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=ROOT,
                            env=checkout_env(NUMBA_CACHE_DIR=str(cache)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_processes_compiling_at_once_share_one_cache(tmp_path):
    cache = tmp_path / "numba"
    procs = [_start(cache) for _ in range(3)]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert any(o["compiled"] for o in outs)  # the cache was empty: someone compiled
    assert any(cache.rglob("*.nbi")) and any(cache.rglob("*.nbc"))
    later = _start(cache)
    out, err = later.communicate(timeout=900)
    assert later.returncode == 0, err[-3000:]
    warm = json.loads(out.strip().splitlines()[-1])
    assert warm["compiled"] == 0  # every kernel loaded from what the three wrote
    for o in outs:
        assert (o["mean"], o["std"]) == (warm["mean"], warm["std"])
