"""Running compiled kernels on several threads: numba's ``parallel=True`` kernels, which
several Python threads may call at once, and serial ``nogil`` kernels split over a pool of
Python threads.

numba runs ``parallel=True`` kernels on a threading layer: OpenMP or TBB, which accept
launches from several Python threads at once, or its own ``workqueue``, which does not (a
second concurrent launch aborts the process).  numba picks workqueue only where neither of the
others can be loaded (or where ``NUMBA_THREADING_LAYER`` asks for it); there, every parallel
kernel of this package is launched under one process-wide lock, so estimators used from
several threads (one per thread, or an optimizer shared by threads) are safe everywhere.

:func:`run_split` runs a serial kernel over contiguous ranges of its items (trees, blocks of
queries) on a pool of Python threads instead: a ``nogil`` kernel releases the GIL, so the
ranges run at once, and the one compiled kernel serves both the serial and the threaded
call, where a ``parallel=True`` variant would be compiled on its own (seconds on a fresh
install).  Items must be independent, so the numbers do not depend on the split.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["parallel_kernel", "run_split"]

_LOCK = threading.Lock()
_POOL_LOCK = threading.Lock()
_pool = None
_in_pool = threading.local()  # set on the pool's own threads: a kernel there runs serially


@functools.cache
def layer_is_threadsafe() -> bool:
    """Whether the threading layer numba will use accepts concurrent launches (read once, at
    the first launch: loading a layer's library is left until a kernel needs it)."""
    chosen = str(numba.config.THREADING_LAYER).lower()
    if chosen == "workqueue":
        return False
    if chosen in ("omp", "tbb", "safe", "threadsafe"):
        return True
    for layer in ("omppool", "tbbpool"):  # "default" / "forksafe": the first that loads
        try:
            importlib.import_module(f"numba.np.ufunc.{layer}")
            return True
        except Exception:  # noqa: BLE001 - a layer that cannot load is not used
            continue
    return False


def parallel_kernel(kernel):
    """``kernel`` (a ``parallel=True`` dispatcher), launched under a process-wide lock where
    the threading layer is not threadsafe; ``.dispatcher`` is the kernel itself."""

    @functools.wraps(kernel)
    def launch(*args):
        if layer_is_threadsafe():
            return kernel(*args)
        with _LOCK:
            return kernel(*args)

    launch.dispatcher = kernel
    return launch


def _forget_pool():
    """After a fork the child has none of the parent's pool threads: it starts its own."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _mark_pool_thread():
    _in_pool.active = True


def _executor():
    global _pool
    with _POOL_LOCK:
        if _pool is None:
            _pool = ThreadPoolExecutor(max(1, numba.config.NUMBA_NUM_THREADS - 1),
                                       thread_name_prefix="surrogates",
                                       initializer=_mark_pool_thread)
        return _pool


def run_split(kernel, n_items, *args):
    """``kernel(lo, hi, *args)`` over contiguous ranges ``lo:hi`` that cover ``0:n_items``, one
    range per thread: as many threads as :func:`numba.get_num_threads` allows (numba's own
    setting for its parallel kernels), the calling thread running the first range.  On one
    thread, or called from a pool thread, it is ``kernel(0, n_items, *args)``."""
    parts = min(int(n_items), numba.get_num_threads())
    if parts <= 1 or getattr(_in_pool, "active", False):
        kernel(0, n_items, *args)
        return
    bounds = [n_items * k // parts for k in range(parts + 1)]
    pool = _executor()
    futures = [pool.submit(kernel, bounds[k], bounds[k + 1], *args) for k in range(1, parts)]
    try:
        kernel(bounds[0], bounds[1], *args)
    finally:
        for f in futures:
            f.result()
