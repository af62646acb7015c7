"""numba's on-disk cache shared by several processes: processes that compile the same
kernels at once into one empty ``NUMBA_CACHE_DIR`` neither crash nor corrupt it, and a later
process loads every kernel from it (compiles nothing) and computes the same numbers; an install
where no cache place can be written, and a read-only copy run by another user, still run."""

import json
import os
import subprocess
import sys
import textwrap

from tests.support import checkout_env, RECORD_COMPILES, ROOT

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    from surrogates import MondrianForestRegressor
""") + RECORD_COMPILES + textwrap.dedent("""
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


def _copy_of_surrogates(dest):
    """A copy of the ``surrogates`` package under ``dest`` with no cache in it."""
    import shutil

    shutil.copytree(ROOT / "surrogates", dest / "surrogates",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _run_in(cwd, env, user=None):
    cmd = [sys.executable, "-c", SCRIPT]
    if user is not None:
        cmd = ["runuser", "-u", user, "--"] + cmd
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_an_install_where_no_cache_place_can_be_written_still_runs(tmp_path):
    """Where numba can write to none of its cache places (``NUMBA_CACHE_DIR``, the sources'
    ``__pycache__``, the user's cache directory) it would refuse to define the kernels; they
    then compile into a private temporary directory of the process, removed at exit, and give
    the numbers of a normally cached run.  (Root can write anywhere, so each place is blocked
    by a file standing where a directory would have to be.)"""
    pkg = _copy_of_surrogates(tmp_path / "pkg")
    for d in [p for p in (pkg / "surrogates").rglob("*") if p.is_dir()] + [pkg / "surrogates"]:
        (d / "__pycache__").write_text("")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    env.update(HOME=str(blocker / "home"), XDG_CACHE_HOME=str(blocker / "xdg"),
               NUMBA_CACHE_DIR=str(blocker / "numba"), TMPDIR=str(tmpdir))
    out = _run_in(pkg, env)
    assert out["compiled"]
    assert list(tmpdir.iterdir()) == []  # the private cache went with the process
    normal = _run_in(ROOT, checkout_env(NUMBA_CACHE_DIR=str(tmp_path / "numba")))
    assert (out["mean"], out["std"]) == (normal["mean"], normal["std"])


def _other_user():
    """A user other than root that can run this interpreter, or the reason there is none."""
    import shutil

    if os.geteuid() != 0 or shutil.which("runuser") is None:
        return None, "needs root and runuser to switch to another user"
    probe = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", "import numba"],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode:
        return None, f"user nobody cannot run {sys.executable} with numba"
    return "nobody", ""


def test_a_read_only_copy_with_a_filled_cache_runs_for_another_user(tmp_path):
    """A copy of the package whose ``__pycache__`` holds every kernel, made read-only, run by
    another user whose home cannot be written and whose ``NUMBA_CACHE_DIR`` is read-only: it
    runs, with the same numbers."""
    import pytest

    user, reason = _other_user()
    if user is None:
        pytest.skip(reason)
    pkg = _copy_of_surrogates(tmp_path / "pkg")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    filled = _run_in(pkg, env)  # fills the copy's __pycache__
    cache = tmp_path / "numba"
    cache.mkdir()
    subprocess.run(["chmod", "-R", "a-w", str(pkg), str(cache)], check=True)
    tmp_path.chmod(0o755)
    env.update(HOME="/nonexistent", NUMBA_CACHE_DIR=str(cache))
    try:
        other = _run_in(pkg, env, user)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(pkg), str(cache)], check=True)
    assert (other["mean"], other["std"]) == (filled["mean"], filled["std"])
