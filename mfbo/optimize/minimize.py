"""One-call optimization (:func:`minimize`, which also maximises) and the :func:`objective`
decorator."""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import numbers
import pickle
import sys
import time
import warnings
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, ThreadPoolExecutor, wait
from typing import Callable, Iterable

from .._core.arguments import check_int
from .channel import ReportServer
from .handle import TrialHandle, takes_trial
from .optimizer import Optimizer, StudyExhausted
from .workers import Workers, evaluate, is_broken
from ..proposal.recipes import as_recipe
from ..results.result import OptimizeResult
from ..space import as_space
from ..study.study import TrialFinished, check_direction, checked_configurations
from ..study.trial import shorten

__all__ = ["minimize", "objective", "Objective"]


def minimize(f: Callable, space, n_calls: int = 50, random_state=None, surrogate="mondrian",
             acquisition=None, candidates=None, storage=None, n_workers: int = 1, executor=None,
             callbacks: Iterable[Callable] | None = None, progress_bar: bool = True,
             study_name: str = "default", direction: str = "minimize",
             initial_points=None, timeout: float | None = None, pruner=None,
             **optimizer_options) -> OptimizeResult:
    """Minimise (or with ``direction="maximize"`` maximise) ``f(**params)`` over ``space``
    with ``n_calls`` evaluations.

    Parameters
    ----------
    f : callable
        Called as ``f(**params)``; returns the value as a float, or a dict with a ``"loss"``
        key holding it and any extra fields (kept in the results).  An exception, None, NaN
        or inf is a failed trial: recorded with its error text, never a crash of the loop.  A
        return that is no value (a dict without ``"loss"``, a tuple, a string...) is a failed
        trial too, with a ``UserWarning`` the first time each type of such return is seen in
        the call.  If every trial the call evaluated failed, a ``UserWarning`` says so at the
        end, with the first error.

        An ``f`` that declares a parameter named ``trial`` is called as ``f(**params,
        trial=handle)``: ``handle.report(value, step)`` records an intermediate value,
        ``handle.should_prune()`` asks ``pruner`` whether to stop, and raising
        :class:`~mfbo.TrialPruned` records the trial ``"pruned"`` with the values it reported
        (:class:`~mfbo.optimize.handle.TrialHandle`).  In worker processes (``n_workers > 1``
        without an executor, or an executor of processes) the handle reaches the study
        through a local socket served by a thread of this process
        (:mod:`mfbo.optimize.channel`): the workers must run on this host.  The space may
        then have no parameter named ``trial``.
    space : dict or Space
        ``name -> Real/Integer/Categorical`` (``(low, high)`` means ``Real``).
    n_calls : int, default=50
        The study ends when it holds this many finished trials (a resumed study counts the
        trials already in its storage).  With ``timeout`` or a callback it may end sooner;
        it also ends sooner, with a ``UserWarning``, when the optimizer has no proposal left
        (:class:`~mfbo.StudyExhausted`: a finite space used up, or ``min_distance`` leaving
        no room) or a broken ``executor`` given by the user stops it (see ``executor``).
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
    pruner : Pruner or None, default=None
        Whether a trial that reports should stop (:mod:`mfbo.pruners`; see
        :class:`~mfbo.Optimizer`).  None: never.
    storage : None or path, default=None
        ``"study.db"`` journals every trial in SQLite; calling again with the same storage
        resumes the study.
    n_workers : int, default=1
        Evaluations in flight at once.  With ``n_workers > 1`` and no ``executor`` a
        ``ProcessPoolExecutor`` of this call's own is used (``f`` must then be picklable, e.g.
        defined at module level).  A worker process of it that dies (a crash in native code,
        the OOM killer, ``os._exit``) breaks the whole pool and every evaluation in flight,
        and which one killed it cannot be told: those trials (the same trials, none asked
        anew) are evaluated again one at a time, each alone in a pool of one process, so one
        that breaks that pool is known to have killed its worker.  It is recorded failed
        ("its worker process died", with the exit code or signal), the others are told their
        values, and the study goes on in a new pool of ``n_workers`` to ``n_calls``.  (An
        evaluation that kills its worker thus runs twice.)
    executor : concurrent.futures.Executor, optional
        Where evaluations run (e.g. ``distributed.Client(cluster).get_executor()``).  It is
        the caller's: never shut down, nor rebuilt when it breaks (``BrokenExecutor``, e.g.
        ``BrokenProcessPool`` after a worker process died).  Then the trials in flight that
        did not finish are recorded failed (which of them broke it cannot be told), no trial
        is asked any more and the call returns the result so far with a ``UserWarning``:
        nothing is lost, and with the same ``storage`` a call with a working executor resumes
        the study.
    callbacks : iterable of callables, optional
        Each is called as ``cb(trial, optimizer)`` after every finished trial; returning True
        stops the study.
    progress_bar : bool, default=True
        A tqdm bar showing the best value so far (and, while numba compiles the forest's
        kernels, on the first run after installing: that it does).
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
    space = as_space(space)
    handles = takes_trial(f)
    if handles and "trial" in space.names:
        raise ValueError("f declares a parameter named 'trial', which minimize fills with the "
                         "running trial's handle, and the space has a parameter 'trial' too: "
                         "rename one of them.")
    if executor is None and n_workers > 1 or isinstance(executor, ProcessPoolExecutor):
        try:
            pickle.dumps(f)
        except Exception as exc:
            raise TypeError(f"f must be picklable to run in worker processes (n_workers="
                            f"{n_workers}): {type(exc).__name__}: {exc}. Define it at module "
                            f"level, or pass an executor that runs it in this process (e.g. a "
                            f"ThreadPoolExecutor).") from None
    points = [] if initial_points is None else checked_configurations(
        space, initial_points, "initial_points")
    if len(points) > n_calls:
        raise ValueError(f"initial_points holds {len(points)} configurations, more than "
                         f"n_calls={n_calls}.")
    if "n_initial" not in optimizer_options:
        optimizer_options["n_initial"] = as_recipe(surrogate).initial_design.size_within(
            len(space), n_calls)
    opt = Optimizer(space, surrogate=surrogate, acquisition=acquisition, candidates=candidates,
                    random_state=random_state, storage=storage, study_name=study_name,
                    direction=direction, pruner=pruner, **optimizer_options)
    if points:
        try:
            opt.enqueue(points, skip_existing=True)
        except BaseException:
            opt.close()
            raise
    deadline = None if timeout is None else started + float(timeout)
    workers = Workers(int(n_workers), executor)
    bar = None
    if progress_bar:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_calls, initial=min(opt.n_finished, n_calls), desc="mfbo",
                   unit="trial")
    tally = _Tally()
    # handles in other processes than this one reach the study through a server of its own
    here = executor is None and n_workers == 1 or isinstance(executor, ThreadPoolExecutor)
    server = ReportServer(opt) if handles and not here else None
    link = None if not handles else opt if server is None else server.client()
    try:
        why = _run(f, opt, n_calls, workers, callbacks, bar, deadline, tally, link)
    finally:
        if bar is not None:
            bar.close()
        workers.shutdown()
        if server is not None:
            server.close()
        opt.close()
    result = opt.result()
    if why is not None and opt.n_finished < n_calls:
        n = opt.n_finished
        warnings.warn(f"minimize stopped early: {why}; the study holds {n} finished "
                      f"trial{'' if n == 1 else 's'} of n_calls={n_calls}.", UserWarning,
                      stacklevel=2)
    if tally.told and not tally.succeeded:
        warnings.warn(f"no trial succeeded: all {tally.told} trial(s) this call evaluated "
                      f"failed; the first error: {tally.first_error}", UserWarning,
                      stacklevel=2)
    left = [t.id for t in result.trials if t.state == "pending"]
    if left and opt.n_finished < n_calls:
        warnings.warn(f"the study has {opt.n_finished} finished trials of n_calls={n_calls}; "
                      f"{len(left)} pending trial(s) {left[:10]} belong to other processes "
                      f"that may still be running them.", UserWarning, stacklevel=2)
    return result


class _Tally:
    """What one :func:`minimize` call told: how many trials, how many did not fail (complete
    or pruned), the first error, and the types of objective returns already warned about
    (each is warned about once per call, not once per trial)."""

    def __init__(self):
        self.told = 0
        self.succeeded = 0
        self.first_error = None
        self.refused_types = set()

    def count(self, trial) -> None:
        self.told += 1
        if trial.state != "failed":
            self.succeeded += 1
        elif self.first_error is None:
            self.first_error = trial.error

    def refused(self, value, exc: Exception) -> None:
        """Warn, once per type in this call, that the objective returned ``value``, which
        :meth:`Optimizer.tell` refused with ``exc``.  The message names no trial: the
        same return in every trial is one mistake."""
        kind = type(value).__name__
        if kind in self.refused_types:
            return
        self.refused_types.add(kind)
        warnings.warn(f"the objective returned a {kind} ({shorten(repr(value), 60)}); "
                      f"expected a number, or a dict with a 'loss' key. Such trials are "
                      f"recorded failed (warned once "
                      f"per type of return in a minimize call), with the error: {exc}",
                      UserWarning, stacklevel=6)  # minimize's caller


def _failure(error: str) -> dict:
    """An outcome as :func:`~mfbo.optimize.workers.evaluate` returns it, for an evaluation that gave
    no outcome (its worker died, the executor broke)."""
    return {"outcome": None, "error": error, "pruned": False, "start": None, "end": None,
            "worker": None}


def _outcome(fu) -> dict:
    """The outcome of a finished future: its result, or a failure for its exception."""
    try:
        return fu.result()
    except Exception as exc:  # e.g. f or its return could not be pickled
        return _failure(f"{type(exc).__name__}: {exc}")


def _broke(fu) -> bool:
    """Whether a future ended, or will end, because its executor broke (not done yet after
    a break: it is in the broken pool's hands)."""
    return not fu.done() or (not fu.cancelled() and is_broken(fu.exception()))


def _recorded(opt, trial) -> bool:
    """Whether the study holds ``trial`` as told: an error :meth:`Optimizer.tell` raised
    after that came from what followed the record (the surrogate's update), not from a
    refusal of the objective's return, which raises before anything is recorded."""
    try:
        opt.study.pending_trial(trial)
    except TrialFinished:
        return True
    return False


def _tell(opt, trial, res, bar, tally=None):
    """Tell ``res``; None when the trial had been told already by the owner it was taken
    from (whose heartbeat had stopped while it still evaluated): its value is the one kept.

    A return of the objective that :meth:`Optimizer.tell` refuses (no number, no dict with
    a ``"loss"``) is told as a failed trial with the refusal as its error, and warned about
    (:meth:`_Tally.refused`)."""
    stamps = {"start": res["start"], "end": res["end"], "worker": res["worker"]}
    try:
        try:
            if res["pruned"]:
                t = opt.tell(trial, state="pruned", **stamps)
            else:
                t = opt.tell(trial, res["outcome"] if res["error"] is None else None,
                             error=res["error"], **stamps)
        except TrialFinished:
            raise
        except (TypeError, ValueError) as exc:
            if res["error"] is not None or _recorded(opt, trial):
                raise  # not about the objective's return (e.g. the surrogate's update)
            if tally is not None:
                tally.refused(res["outcome"], exc)
            t = opt.tell(trial, None, error=str(exc), **stamps)
    except TrialFinished:
        warnings.warn(f"trial {trial.id} had been told already by the worker it was taken from "
                      f"(its heartbeat had stopped); the value told first is kept.",
                      UserWarning, stacklevel=5)  # minimize's caller
        return None
    if tally is not None:
        tally.count(t)
    if bar is not None:
        bar.update(1)
        if opt.study.objectives.multi:
            bar.set_postfix(front=len(opt.best_trials), refresh=False)
        elif opt.best_trial is not None:
            bar.set_postfix(best=f"{opt.best_trial.value:.6g}", refresh=False)
    return t


#: what the progress bar says while numba compiles the surrogates' kernels: on a fresh install
#: the first fits (in the first tells) and the first proposal wait about a minute for them
COMPILING = "mfbo (compiling the forest's kernels, first run only...)"


@contextlib.contextmanager
def _compile_notice(bar):
    """A block in which ``bar``'s description says :data:`COMPILING` while numba compiles one
    of the surrogates' kernels.

    numba raises a compile event only when it compiles (kernels loaded from its cache raise
    none): a run on a filled cache shows nothing, and a kernel of the user's own objective
    does not count."""
    event = sys.modules.get("numba.core.event")
    if bar is None or event is None:  # numba not loaded: no kernel of ours can compile
        yield
        return
    before = bar.desc
    ours = []  # per compilation under way (they nest: a kernel compiles those it calls)
    shown = []

    class Notice(event.Listener):
        def on_start(self, ev):
            kernel = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
            ours.append((getattr(kernel, "__module__", None) or "").startswith("surrogates."))
            if ours[-1] and ours.count(True) == 1:
                shown.append(True)
                bar.set_description_str(COMPILING)

        def on_end(self, ev):
            if ours.pop() and True not in ours:
                # not drawn now: one kernel's end is often the next one's start (no flicker);
                # drawn by the bar's next update or when the block ends
                bar.set_description_str(before, refresh=False)

    try:
        with event.install_listener("numba:compile", Notice()):
            yield
    finally:
        if shown:
            bar.set_description_str(before)


def _run(f, opt, n_calls, workers, callbacks, bar, deadline=None, tally=None, link=None):
    """Ask, evaluate and tell until the study holds ``n_calls`` trials, a callback stops it,
    the candidates run out, ``time.monotonic()`` passes ``deadline`` or an executor given by
    the user breaks; every trial asked is told before returning.  Returns why it stopped
    asking when that is worth a warning (no proposal left, a broken executor), else None.

    When our process pool breaks, every evaluation in flight fails with it and the one whose
    worker died cannot be told from the others: they become suspects, evaluated again one at
    a time, each alone in a pool of one process, so that a pool broken then names its culprit
    (told failed); the others are told their values, and the trials refused by the broken
    pool are evaluated as usual afterwards.  Given a ``link`` (the optimizer, or a client of
    its report server) ``f`` is given each trial's :class:`~mfbo.optimize.handle.TrialHandle`
    on it as ``trial=``."""
    in_flight = {}      # trial id -> (trial, future or None in this process)
    suspects = deque()  # in flight when our pool broke: evaluated again, one at a time
    unsent = deque()    # asked, but the broken pool refused them: they never ran
    alone = False       # whether in_flight is a suspect running alone
    stop = False
    why = None

    def handle(trial):
        return None if link is None else TrialHandle(link, trial.id, trial.params)

    def finish(trial, res):
        nonlocal stop
        with _compile_notice(bar):  # a tell refits the model (its first fit compiles)
            t = _tell(opt, trial, res, bar, tally)
        if t is None:
            return
        for cb in callbacks:
            if cb(t, opt) is True:
                stop = True

    while True:
        opt.refresh()
        broken = None  # the exception saying the executor broke
        if suspects or alone:
            if not in_flight:
                trial = suspects.popleft()
                alone = True
                try:
                    in_flight[trial.id] = (trial, workers.submit(f, trial.params, alone=True,
                                                                      trial=handle(trial)))
                except Exception as exc:  # the pool broke after its last evaluation
                    if not is_broken(exc):
                        raise
                    suspects.appendleft(trial)
                    broken = exc
        else:
            # the trials refused by a broken pool go first, even after a stop: they were asked
            while len(in_flight) < workers.n_workers and (unsent or not stop):
                if unsent:
                    trial = unsent.popleft()
                else:
                    if deadline is not None and time.monotonic() >= deadline:
                        stop = True
                        break
                    try:
                        with _compile_notice(bar):  # (the first proposal compiles)
                            trial = opt.ask(max_trials=n_calls)
                    except StudyExhausted as exc:
                        stop = True
                        why = f"the optimizer has no proposal left: {str(exc).rstrip('.')}"
                        break
                    if trial is None:
                        break
                if workers.in_process:
                    in_flight[trial.id] = (trial, None)
                    break
                try:
                    in_flight[trial.id] = (trial, workers.submit(f, trial.params,
                                                                 trial=handle(trial)))
                except Exception as exc:  # the pool broke since the last wait
                    if not is_broken(exc):
                        raise
                    unsent.appendleft(trial)
                    broken = exc
                    break
        if broken is None and not in_flight:
            if stop or opt.n_trials >= n_calls:
                # other processes may still hold pending trials of a shared study: done here
                return why
            continue
        if broken is None and workers.in_process:
            (trial, _), = in_flight.values()
            in_flight.clear()
            finish(trial, evaluate(f, trial.params, handle(trial)))
        elif broken is None:
            done, _ = wait([fu for _, fu in in_flight.values()], return_when=FIRST_COMPLETED)
            for tid, (trial, fu) in list(in_flight.items()):
                if fu in done:
                    if _broke(fu):
                        broken = fu.exception()  # stays in flight: handled below
                        continue
                    del in_flight[tid]
                    finish(trial, _outcome(fu))
        if broken is not None:
            if not workers.owned:
                return _give_up(workers, in_flight, unsent, broken, finish)
            _recover(workers, in_flight, suspects, alone, broken, finish)
        if alone and not in_flight:
            alone = bool(suspects)
        if stop and not in_flight and not suspects and not unsent:
            return why


def _recover(workers, in_flight, suspects, alone, broken, finish):
    """Discard our broken pool and sort the trials that were in flight in it: those that
    finished before it broke are told; one running ``alone`` killed its worker (told
    failed, with how its process ended); the others become ``suspects``."""
    how = workers.discard(alone)  # after this every future of the broken pool is done
    hit = []
    for tid, (trial, fu) in sorted(in_flight.items()):
        if _broke(fu):
            hit.append(trial)
        else:
            finish(trial, _outcome(fu))
    in_flight.clear()
    if alone and hit:
        # the only process of its pool died while evaluating it
        (trial,) = hit
        detail = f" ({how})" if how else ""
        cause = broken.__cause__
        cause = f"; {str(cause).strip()[-300:]}" if cause is not None else ""
        finish(trial, _failure(
            f"its worker process died{detail} while evaluating it (a crash in native code, "
            f"the OOM killer, os._exit...): {type(broken).__name__}{cause}"))
    else:
        suspects.extend(hit)


def _give_up(workers, in_flight, unsent, broken, finish) -> str:
    """Tell the trials of a broken executor given by the user (it is not ours to rebuild):
    those that finished their values, the others failed; returns why the study stops."""
    wait([fu for _, fu in in_flight.values()])  # a broken executor fails them soon
    what = f"{type(broken).__name__}: {broken}"
    n_failed = 0
    for tid, (trial, fu) in sorted(in_flight.items()):
        if _broke(fu):
            n_failed += 1
            finish(trial, _failure(
                f"the executor given as executor= broke while this trial was in flight "
                f"({what}); which of the trials then in flight broke it cannot be told"))
        else:
            finish(trial, _outcome(fu))
    in_flight.clear()
    while unsent:
        n_failed += 1
        finish(unsent.popleft(), _failure(
            f"not evaluated: the executor given as executor= is broken ({what})"))
    return (f"the executor given as executor= is broken ({what}); it is not rebuilt, being "
            f"yours: the {n_failed} trial(s) it did not finish were recorded failed. Pass a "
            f"working executor to go on (with the same storage, the study resumes)")


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
