"""Evaluation of the objective: in-process or on any ``concurrent.futures.Executor``.

The objective runs in a worker; the optimizer (and its journal) stays in the calling process.
Anything the objective raises is caught in the worker and comes back as a failed outcome, so
one bad configuration never stops a study.  A worker process that dies (a crash in native
code, the OOM killer, ``os._exit``) breaks a ``ProcessPoolExecutor``: :class:`Workers` starts
a new pool when one of its own breaks (see :func:`mfbo.minimize` for how the trial that killed
it is found).  A
Dask cluster is used through ``distributed.Client(...).get_executor()``; a Ray or MPI pool
through their executors.
"""

from __future__ import annotations

import os
import signal
import socket
import time
import traceback
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor

from ..study.trial import TrialPruned

__all__ = ["evaluate", "make_executor", "Workers", "is_broken", "describe_exits"]


def evaluate(f, params: dict, trial=None) -> dict:
    """Call ``f(**params)`` (``f(**params, trial=trial)`` with a trial handle); returns
    ``{"outcome", "error", "pruned", "start", "end", "worker"}`` (never raises).

    ``outcome`` is what ``f`` returned, ``error`` an exception description for a failure;
    ``pruned`` says that ``f`` raised :class:`~mfbo.TrialPruned`."""
    start = time.time()
    pruned = False
    try:
        out = f(**params) if trial is None else f(**params, trial=trial)
        err = None
    except TrialPruned:  # stopped early: neither a value nor a failure
        out, err, pruned = None, None, True
    except Exception as exc:  # a failed trial, never a crashed loop
        out = None
        tb = traceback.format_exception_only(type(exc), exc)
        err = "".join(tb).strip()
    finally:
        if trial is not None:
            trial.close()  # a worker's connection to the study
    end = time.time()
    return {"outcome": out, "error": err, "pruned": pruned, "start": start, "end": end,
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


def is_broken(exc) -> bool:
    """Whether ``exc`` (raised by ``submit`` or held by a future) says the executor is broken:
    a ``BrokenProcessPool`` (a worker process died) or any other ``BrokenExecutor``."""
    return isinstance(exc, BrokenExecutor)


def describe_exit(code: int) -> str:
    """``"exit code 3"`` or ``"killed by signal SIGKILL"`` for a process's ``exitcode``."""
    if code >= 0:
        return f"exit code {code}"
    try:
        return f"killed by signal {signal.Signals(-code).name}"
    except ValueError:
        return f"killed by signal {-code}"


def describe_exits(codes) -> str:
    """How the processes of a broken pool ended (their ``exitcode``, None while alive), e.g.
    ``"exit code 3"``; ``""`` when none is known.  A broken pool terminates its surviving
    workers with SIGTERM, so SIGTERM is reported only when no process ended otherwise."""
    ended = sorted({c for c in codes if c is not None}, key=abs)
    own = [c for c in ended if c != -signal.SIGTERM] or ended
    return ", ".join(describe_exit(c) for c in own)


class Workers:
    """Where the evaluations of one :func:`~mfbo.minimize` call run: in this process
    (:attr:`in_process`), on an executor the user gave (:attr:`owned` False: it is never shut
    down nor replaced here), or in process pools of our own.  Ours are a pool of
    ``n_workers`` processes and, while some evaluation must run alone, a pool of one process
    (so that a worker death in it is that evaluation's doing); a broken one is
    :meth:`discard`-ed and a new one started at the next :meth:`submit`."""

    def __init__(self, n_workers: int, executor: Executor | None):
        self.n_workers = n_workers
        self.pool, self.owned = make_executor(n_workers, executor)
        self.in_process = self.pool is None and not self.owned
        self._alone = None  # the one-process pool, while evaluations run alone

    def submit(self, f, params: dict, alone: bool = False, trial=None) -> Future:
        """Start :func:`evaluate` of ``f(**params)`` (given ``trial``, a trial handle, as
        ``trial=``); ``alone`` in our one-process pool.
        Raises ``BrokenExecutor`` (see :func:`is_broken`) when the pool broke since the last
        call."""
        if alone:
            if not self.owned:
                raise RuntimeError("only evaluations in our own pools can run alone.")
            if self._alone is None:
                self._alone = ProcessPoolExecutor(max_workers=1)
            return self._alone.submit(evaluate, f, params, trial)
        if self._alone is not None:  # nothing runs alone any more: free its process
            self._alone.shutdown(wait=True)
            self._alone = None
        if self.pool is None:
            self.pool = ProcessPoolExecutor(max_workers=self.n_workers)
        return self.pool.submit(evaluate, f, params, trial)

    def discard(self, alone: bool = False) -> str:
        """Shut down our broken pool (the one-process pool with ``alone``), once every future
        of it has its outcome (a result, or ``BrokenProcessPool`` for those it was running);
        returns how its worker processes ended (:func:`describe_exits`)."""
        if not self.owned:
            raise RuntimeError("an executor given by the user is never shut down here.")
        pool = self._alone if alone else self.pool
        if pool is None:
            return ""
        # the pool forgets its processes on shutdown: keep them to read their exit codes
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=True)
        if alone:
            self._alone = None
        else:
            self.pool = None
        return describe_exits([getattr(p, "exitcode", None) for p in processes])

    def shutdown(self) -> None:
        """Shut down the pools that are ours (an executor given by the user is left
        running)."""
        if self.owned:
            for pool in (self.pool, self._alone):
                if pool is not None:
                    pool.shutdown(wait=True, cancel_futures=True)
            self.pool = self._alone = None
