"""Compiled parallel kernels that several Python threads may call at once.

numba runs ``parallel=True`` kernels on a threading layer: OpenMP or TBB, which accept
launches from several Python threads at once, or its own ``workqueue``, which does not (a
second concurrent launch aborts the process).  numba picks workqueue only where neither of the
others can be loaded (or where ``NUMBA_THREADING_LAYER`` asks for it); there, every parallel
kernel of this package is launched under one process-wide lock, so estimators used from
several threads (one per thread, or an optimizer shared by threads) are safe everywhere.
"""

from __future__ import annotations

import functools
import importlib
import threading

import numba

__all__ = ["parallel_kernel"]

_LOCK = threading.Lock()


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
