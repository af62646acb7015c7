"""Helpers shared by the test modules: the repository root, a small objective and its space,
a surrogate model told observations, subprocesses that import this checkout, and skips for
missing data files."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: a smooth two-dimensional test objective and its space (minimum 0 at (0.3, -0.2))
SPACE = {"x": (-1.0, 1.0), "y": (-1.0, 1.0)}


def quad(x, y):
    return (x - 0.3) ** 2 + (y + 0.2) ** 2


#: a box of Branin's shape and a quadratic on it (minimum 0 at (1, 2)), for the reliability
#: regression tests and those moved out of them
BOX = {"x": (-5.0, 10.0), "y": (0.0, 15.0)}


def box_quad(x, y):
    return (x - 1) ** 2 + (y - 2) ** 2


def stepped_quad(x, y):
    """``quad`` rounded to steps of 0.05: a loss with plateaus (repeats come early)."""
    return round(quad(x, y) / 0.05) * 0.05


def feed_model(model, X, y, one_by_one: bool = True):
    """``model`` told the observations ``X``, ``y`` one at a time as a study tells them (or
    all at once); returns ``model``."""
    if one_by_one:
        for i in range(1, len(y) + 1):
            model.observe(X[:i], y[:i], 1)
    else:
        model.observe(X, y, len(y))
    return model


def run_trials(opt, f, n):
    """Ask and tell ``n`` trials of ``f(**params)`` with ``opt``; returns ``opt``."""
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    return opt


def check_reopen_repeats(space, surrogate, f, n: int, seed: int, db: str, origin: str) -> None:
    """A study of ``2 n`` trials, closed and reopened after ``n``, makes the same proposals
    (parameters and origins) as one run straight through, ``origin`` among them."""
    from mfbo import Optimizer

    options = dict(surrogate=surrogate, random_state=seed, n_initial=4)
    run_trials(Optimizer(space, storage=db, **options), f, n).close()
    again = run_trials(Optimizer(space, storage=db, **options), f, n)
    whole = run_trials(Optimizer(space, **options), f, 2 * n)
    assert origin in [t.origin for t in whole.trials]
    assert [t.params for t in again.trials] == [t.params for t in whole.trials]
    assert [t.origin for t in again.trials] == [t.origin for t in whole.trials]
    again.close()


def checkout_env(**extra: str) -> dict:
    """The environment for a subprocess that imports this checkout's packages."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def wait_until_stopped(pid: int, timeout: float = 30.0) -> None:
    """Wait until process ``pid`` is stopped (state ``T`` in ``/proc``)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] in "Tt":
                return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not stop")


#: code for a child interpreter (:func:`run_python`): ``compiled`` collects the qualified name
#: of every function numba compiles once ``event.register("numba:compile", Listener())`` has
#: run
RECORD_COMPILES = textwrap.dedent("""
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass
""")


def run_python(code: str, timeout: float, *flags: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` (dedented) in a fresh interpreter with ``flags`` (e.g. ``-O``)."""
    return subprocess.run([sys.executable, *flags, "-c", textwrap.dedent(code)], cwd=ROOT,
                          env=checkout_env(**env), capture_output=True, text=True,
                          timeout=timeout)


def run_mfbo(*args: str, timeout: float = 600, cwd=None) -> subprocess.CompletedProcess:
    """Run the ``mfbo`` command of this checkout."""
    return subprocess.run([sys.executable, "-m", "mfbo", *args], cwd=cwd or ROOT,
                          env=checkout_env(), capture_output=True, text=True, timeout=timeout)


def have_data(name: str) -> bool:
    from benchmarks.problems import data
    try:
        data.fetch_file(name, download=False)
        return True
    except FileNotFoundError:
        return False


def requires_data(name: str):
    """Skip unless the data file ``name`` is found locally (CI sets MFBO_DATA_DIR)."""
    return pytest.mark.skipif(not have_data(name), reason=f"{name} not found: set MFBO_DATA_DIR "
                              f"to a directory holding it (CI uses ../shared/data)")


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a file of this checkout)."""
    parts = list(path.resolve().relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The absolute names ``path`` imports (anywhere in it, also in functions; relative imports
    resolved), each ``from m import n`` giving both ``m`` and ``m.n``: the layout tests' view
    of what a module depends on."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            names.add(target)
            names.update(f"{target}.{a.name}" for a in node.names)
    return names
