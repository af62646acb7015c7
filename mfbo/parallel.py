"""Evaluation of the objective: in-process or on any ``concurrent.futures.Executor``.

The objective runs in a worker; the optimizer (and its journal) stays in the calling process.
Anything the objective raises is caught in the worker and comes back as a failed outcome, so
one bad configuration never stops a study.  A Dask cluster is used through
``distributed.Client(...).get_executor()``; a Ray or MPI pool through their executors.
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from concurrent.futures import Executor, ProcessPoolExecutor

__all__ = ["evaluate", "make_executor"]


def evaluate(f, params: dict) -> dict:
    """Call ``f(**params)``; returns ``{"outcome", "start", "end", "worker"}`` (never raises).

    ``outcome`` is what ``f`` returned, or an exception description for a failure."""
    start = time.time()
    try:
        out = f(**params)
        err = None
    except Exception as exc:  # a failed trial, never a crashed loop
        out = None
        tb = traceback.format_exception_only(type(exc), exc)
        err = "".join(tb).strip()
    end = time.time()
    return {"outcome": out, "error": err, "start": start, "end": end,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


def make_executor(n_workers: int, executor: Executor | None) -> tuple[Executor | None, bool]:
    """The executor to use and whether we own it (and must shut it down)."""
    if executor is not None:
        if not callable(getattr(executor, "submit", None)):
            raise TypeError(f"executor must be a concurrent.futures.Executor, got {executor!r}.")
        return executor, False
    if n_workers == 1:
        return None, False
    return ProcessPoolExecutor(max_workers=n_workers), True
