"""One-call optimization (:func:`minimize`, which also maximises) and the :func:`objective`
decorator."""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import pickle
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Callable, Iterable

from .checks import check_int
from .optimizer import Optimizer, StudyExhausted
from .parallel import evaluate, make_executor
from .recipes import default_n_initial
from .results import OptimizeResult
from .space import as_space
from .study import TrialFinished, check_direction, checked_configurations

__all__ = ["minimize", "objective", "Objective"]


def minimize(f: Callable, space, n_calls: int = 50, random_state=None, surrogate="mondrian",
             acquisition=None, candidates=None, storage=None, n_workers: int = 1, executor=None,
             callbacks: Iterable[Callable] | None = None, progress_bar: bool = True,
             study_name: str = "default", direction: str = "minimize",
             initial_points=None, timeout: float | None = None,
             **optimizer_options) -> OptimizeResult:
    """Minimise (or with ``direction="maximize"`` maximise) ``f(**params)`` over ``space``
    with ``n_calls`` evaluations.

    Parameters
    ----------
    f : callable
        Called as ``f(**params)``; returns the value as a float, or a dict with a ``"loss"``
        key holding it and any extra fields (kept in the results).  An exception, NaN or inf
        is a failed trial: recorded with its error text, never a crash of the loop.
    space : dict or Space
        ``name -> Real/Integer/Categorical`` (``(low, high)`` means ``Real``).
    n_calls : int, default=50
        The study ends when it holds this many finished trials (a resumed study counts the
        trials already in its storage).  With ``timeout`` it may end sooner.
    direction : {"minimize", "maximize"}, default="minimize"
        Minimise a loss or maximise a score; the result's values, ``best_value`` and figures
        are the values ``f`` returned either way (see :class:`~mfbo.Optimizer`).  A study
        resumed from a storage must be given the direction it was created with.
    initial_points : list of dict, optional
        Configurations to evaluate first, in order (scikit-optimize's ``x0``), each with a
        value for every parameter; they are enqueued (:meth:`Optimizer.enqueue`) and count
        towards the initial design and ``n_calls``.  All are checked before anything is
        recorded.  Points the study has already asked or queued are not enqueued again, so
        re-running the same call on a storage resumes without evaluating them twice.
    timeout : float or None, default=None
        Seconds of wall time, counted from the call: once they have passed no new trial is
        asked; the evaluations running then finish and are recorded (never cut off nor
        lost), so the call can last longer than ``timeout`` by one evaluation.  None: no limit
        (``n_calls`` is always the upper bound).
    surrogate, acquisition, candidates, random_state, **optimizer_options
        See :class:`~mfbo.Optimizer`.  Without ``n_initial`` the initial design is the
        surrogate's recipe's size, capped at a quarter of ``n_calls`` (as SMAC3 does).
    storage : None or path, default=None
        ``"study.db"`` journals every trial in SQLite; calling again with the same storage
        resumes the study.
    n_workers : int, default=1
        Evaluations in flight at once.  With ``n_workers > 1`` and no ``executor`` a
        ``ProcessPoolExecutor`` is used (``f`` must then be picklable, e.g. defined at module
        level).
    executor : concurrent.futures.Executor, optional
        Where evaluations run (e.g. ``distributed.Client(cluster).get_executor()``).
    callbacks : iterable of callables, optional
        Each is called as ``cb(trial, optimizer)`` after every finished trial; returning True
        stops the study.
    progress_bar : bool, default=True
        A tqdm bar showing the best value so far.
    """
    started = time.monotonic()
    check_int(n_calls, "n_calls")
    if timeout is not None and (not isinstance(timeout, numbers.Real) or isinstance(
            timeout, bool) or not math.isfinite(timeout) or timeout <= 0):
        raise ValueError(f"timeout must be a positive number of seconds or None, got "
                         f"{timeout!r}.")
    check_direction(direction)
    check_int(n_workers, "n_workers")
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}.")
    if callable(callbacks):
        callbacks = [callbacks]
    elif callbacks is None:
        callbacks = []
    elif isinstance(callbacks, Iterable) and not isinstance(callbacks, (str, bytes)):
        callbacks = list(callbacks)
    else:
        raise TypeError(f"callbacks must be a callable or a list of callables, got "
                        f"{callbacks!r}.")
    for cb in callbacks:
        if not callable(cb):
            raise TypeError(f"callbacks must be callables, got {cb!r} in the list.")
    if executor is None and n_workers > 1 or isinstance(executor, ProcessPoolExecutor):
        try:
            pickle.dumps(f)
        except Exception as exc:
            raise TypeError(f"f must be picklable to run in worker processes (n_workers="
                            f"{n_workers}): {type(exc).__name__}: {exc}. Define it at module "
                            f"level, or pass an executor that runs it in this process (e.g. a "
                            f"ThreadPoolExecutor).") from None
    space = as_space(space)
    points = [] if initial_points is None else checked_configurations(
        space, initial_points, "initial_points")
    if len(points) > n_calls:
        raise ValueError(f"initial_points holds {len(points)} configurations, more than "
                         f"n_calls={n_calls}.")
    if "n_initial" not in optimizer_options:
        default = default_n_initial(surrogate, len(space))
        optimizer_options["n_initial"] = max(1, min(default, n_calls // 4 or 1))
    opt = Optimizer(space, surrogate=surrogate, acquisition=acquisition, candidates=candidates,
                    random_state=random_state, storage=storage, study_name=study_name,
                    direction=direction, **optimizer_options)
    if points:
        try:
            opt.enqueue(points, skip_existing=True)
        except BaseException:
            opt.close()
            raise
    deadline = None if timeout is None else started + float(timeout)
    pool, owned = make_executor(int(n_workers), executor)
    bar = None
    if progress_bar:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_calls, initial=min(opt.n_finished, n_calls), desc="mfbo",
                   unit="trial")
    try:
        _run(f, opt, n_calls, int(n_workers), pool, callbacks, bar, deadline)
    finally:
        if bar is not None:
            bar.close()
        if owned:
            pool.shutdown(wait=True, cancel_futures=True)
        opt.close()
    result = opt.result()
    left = [t.id for t in result.trials if t.state == "pending"]
    if left and opt.n_finished < n_calls:
        warnings.warn(f"the study has {opt.n_finished} finished trials of n_calls={n_calls}; "
                      f"{len(left)} pending trial(s) {left[:10]} belong to other processes "
                      f"that may still be running them.", UserWarning, stacklevel=2)
    return result


def _tell(opt, trial, res, bar):
    """Tell ``res``; None when the trial had been told already by the owner it was taken
    from (whose heartbeat had stopped while it still evaluated): its value is the one kept."""
    try:
        t = opt.tell(trial, res["outcome"] if res["error"] is None else None,
                     error=res["error"], start=res["start"], end=res["end"],
                     worker=res["worker"])
    except TrialFinished:
        warnings.warn(f"trial {trial.id} had been told already by the worker it was taken from "
                      f"(its heartbeat had stopped); the value told first is kept.",
                      UserWarning, stacklevel=3)
        return None
    if bar is not None:
        best = opt.best_trial
        bar.update(1)
        if best is not None:
            bar.set_postfix(best=f"{best.value:.6g}", refresh=False)
    return t


def _run(f, opt, n_calls, n_workers, pool, callbacks, bar, deadline=None):
    """Ask, evaluate and tell until the study holds ``n_calls`` trials, a callback stops it,
    the candidates run out or ``time.monotonic()`` passes ``deadline``; every trial asked is
    told before returning."""
    in_flight = {}
    stop = False
    while True:
        opt.refresh()
        while not stop and len(in_flight) < n_workers:
            if deadline is not None and time.monotonic() >= deadline:
                stop = True
                break
            try:
                trial = opt.ask(max_trials=n_calls)
            except StudyExhausted:
                stop = True
                break
            if trial is None:
                break
            if pool is None:
                in_flight[trial.id] = (trial, None)
                break
            in_flight[trial.id] = (trial, pool.submit(evaluate, f, trial.params))
        if not in_flight:
            if stop or opt.n_trials >= n_calls:
                # other processes may still hold pending trials of a shared study: done here
                return
            continue
        if pool is None:
            (trial, _), = in_flight.values()
            in_flight.clear()
            finished = [(trial, evaluate(f, trial.params))]
        else:
            done, _ = wait([fu for _, fu in in_flight.values()], return_when=FIRST_COMPLETED)
            finished = []
            for tid, (trial, fu) in list(in_flight.items()):
                if fu in done:
                    del in_flight[tid]
                    try:
                        res = fu.result()
                    except Exception as exc:  # the worker itself died or could not pickle f
                        res = {"outcome": None, "error": f"{type(exc).__name__}: {exc}",
                               "start": None, "end": None, "worker": None}
                    finished.append((trial, res))
        for trial, res in finished:
            t = _tell(opt, trial, res, bar)
            if t is None:
                continue
            for cb in callbacks:
                if cb(t, opt) is True:
                    stop = True
        if stop and not in_flight:
            return


class Objective:
    """An objective function bound to its search space (made by :func:`objective`).

    Calling it calls the function unchanged; :meth:`minimize` optimises it."""

    def __init__(self, func: Callable, space):
        self.func = func
        self.space = as_space(space)
        params = inspect.signature(func).parameters
        takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params.values())
        missing = [n for n in self.space.names if n not in params and not takes_kwargs]
        if missing:
            raise ValueError(f"{func.__name__} has no parameter(s) {missing} of the space.")
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def __reduce__(self):
        return (Objective, (self.func, self.space))

    def minimize(self, n_calls: int = 50, **kwargs) -> OptimizeResult:
        """:func:`minimize` this function over its space; keyword arguments are passed on."""
        return minimize(self.func, self.space, n_calls=n_calls, **kwargs)

    def __repr__(self):
        return f"Objective({self.func.__name__}, {self.space!r})"


def objective(space=None, **dimensions):
    """Decorator binding a function to a search space.

    >>> @objective(x=(-5.0, 10.0), y=(0.0, 15.0))
    ... def f(x, y):
    ...     return (x - 1) ** 2 + (y - 2) ** 2
    >>> f(1.0, 2.0)          # still a normal function
    0.0
    >>> result = f.minimize(n_calls=20, random_state=0, progress_bar=False)  # doctest: +SKIP

    The space is a dict (first argument) or keyword arguments ``name=dimension``.
    """
    if space is not None and dimensions:
        raise TypeError("give the space either as a dict or as keyword arguments, not both.")
    spec = space if space is not None else dimensions
    if callable(spec) and not isinstance(spec, dict):
        raise TypeError("objective needs a space: use @objective({...}) or @objective(x=...).")

    def wrap(func):
        return Objective(func, spec)
    return wrap
