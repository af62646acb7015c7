"""The state of a study: a replay of its journal (:mod:`mfbo.storage`).

An ``ask`` event appends a pending trial, a ``claim`` hands a pending trial to a new owner, a
``tell`` finishes it (complete, failed or pruned), an ``enqueue`` puts a configuration in the
queue of those to be asked before any proposal (the ``ask`` that takes it names it).  A
``report`` records a pending trial's intermediate value at one step (an epoch, a boosting
round, a fold), a ``rung`` the value a pending trial had when it reached a rung of successive
halving (:mod:`mfbo.pruners`): in the journal, they are shared by every process of the study
and survive a resume.  Every row is checked as it is
replayed, so a damaged or hand-edited journal is refused with the event it lies in.  A
:class:`Study` knows nothing of surrogates or acquisitions: it keeps the trials and the arrays
a proposal policy reads (the observations a surrogate is fed and every asked point), and it can
be opened on its own to inspect a study (:meth:`Study.open`).
"""

from __future__ import annotations

import contextlib
import json
import numbers
import os
import time
import warnings
import weakref
from typing import Iterator, Mapping

import numpy as np

from acquisitions import row_keys

from ..space.candidates import CandidateSet
from .ownership import Heartbeat, new_owner, owner_alive, release
from ..space import Space, as_space
from ..storage import InMemoryStorage, Storage, as_storage
from ..storage.base import read_in_pages, retrying
from .._core.arguments import check_int
from .objectives import DIRECTIONS, Objectives, check_direction
from .pruned import ON_PRUNED, carried_loss
from .trial import Trial, finite, public, shorten

__all__ = ["Study", "TrialFinished", "STATES", "CandidatesDiffer", "checked_configurations",
           "check_direction", "DIRECTIONS", "stored_objectives"]


#: an owner is taken for dead only once it has missed this many of its own heartbeats (and
#: the grace period of the one that looks has passed): workers configured with a longer
#: interval than the one looking are not lost
GRACE_BEATS = 3
#: seconds between two reads of the heartbeats by one study handle
HEARTBEAT_READ_EVERY = 1.0


#: what replaying a damaged row can raise (a missing key, a value of the wrong type or too
#: large for a float, a list where an object belongs)
_DAMAGE = (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError)


class CandidatesDiffer(ValueError):
    """The candidate set given to a stored study is not the one it was created with (other
    rows, or the same rows in another order): its journal's row numbers do not fit them."""


class TrialFinished(ValueError):
    """The trial told has been told already: by this owner, or by the owner it was taken
    from when that owner's heartbeat had stopped (both evaluated it; the first value told is
    the one recorded)."""


class Rows:
    """Unit-cube rows and one value per row (or, with ``n_outputs``, a row of values:
    :attr:`Y`), appended one at a time (amortised O(1)); ``X``, ``y`` and ``Y`` are views of
    the filled part (rows never change once written)."""

    def __init__(self, n_dims: int, n_outputs: int | None = None):
        self._X = np.empty((16, n_dims))
        self._y = np.empty(16) if n_outputs is None else np.empty((16, n_outputs))
        self.n = 0

    def append(self, unit: np.ndarray, value=np.nan) -> None:
        if self.n == self._y.shape[0]:
            self._X = np.concatenate([self._X, np.empty_like(self._X)])
            self._y = np.concatenate([self._y, np.empty_like(self._y)])
        self._X[self.n] = unit
        self._y[self.n] = value
        self.n += 1

    @property
    def X(self) -> np.ndarray:
        return self._X[:self.n]

    @property
    def y(self) -> np.ndarray:
        """One value per row (with several outputs: the first's)."""
        return self._y[:self.n] if self._y.ndim == 1 else self._y[:self.n, 0]

    @property
    def Y(self) -> np.ndarray:
        """The rows' values, one column per output (one column without ``n_outputs``)."""
        y = self._y[:self.n]
        return y[:, None] if y.ndim == 1 else y


def params_key(params: dict) -> bytes:
    """One configuration's identity (equal for equal params dicts)."""
    return json.dumps(params, sort_keys=True, default=str).encode()


#: what :attr:`Study.obs` holds for a failed trial (see :class:`Study`)
ON_FAILURE = ("worst", "ignore", "infeasible")

#: the states of a trial, in the order summaries list them
STATES = ("complete", "pruned", "failed", "pending")


def stored_objectives(study_name: str, config: Mapping) -> Objectives:
    """The objectives study ``study_name`` recorded in its settings ``config``; a
    ``ValueError`` naming the study when they cannot be read."""
    try:
        return Objectives.from_config(config)
    except _DAMAGE as exc:
        raise ValueError(f"study {study_name!r}: its stored objectives cannot be read "
                         f"({shorten(exc)}); the storage is damaged.") from None


def checked_configurations(space: Space, configs, what: str) -> list[dict]:
    """``configs`` (one params dict, a sequence of them or a DataFrame with a column per
    parameter) validated against ``space``: the
    normalised copies, or a ``TypeError``/``ValueError`` naming ``what``, the configuration's
    position and the bad parameter.  Every parameter of the space needs a value."""
    if isinstance(configs, Mapping):
        configs = [configs]
    elif hasattr(configs, "columns") and callable(getattr(configs, "to_dict", None)):
        configs = configs.to_dict("records")  # a DataFrame: one configuration per row
    elif isinstance(configs, (str, bytes)) or not hasattr(configs, "__iter__"):
        raise TypeError(f"{what} must be a params dict or a list of them, got "
                        f"{type(configs).__name__}.")
    out = []
    for i, params in enumerate(configs):
        if not isinstance(params, Mapping):
            raise TypeError(f"{what}[{i}] must be a params dict, got {type(params).__name__}.")
        try:
            out.append(space.validate(params))
        except (TypeError, ValueError) as exc:
            text = str(exc)
            if "missing parameter" in text:
                text = (text.rstrip(".") + " (each configuration needs a value for every "
                        "parameter of the space).")
            raise type(exc)(f"{what}[{i}]: {text}") from None
    return out


class Study:
    """Trials of one study in one storage, replayed from its journal.

    Parameters
    ----------
    space : dict or Space
        The study's search space (checked against the stored one).
    storage : None, path or Storage, default=None
        Where the journal lives (see :func:`mfbo.storage.as_storage`).
    study_name : str, default="default"
    candidates : CandidateSet, None or "recorded"
        The finite set the study chooses from, if any; ``candidate`` fields of its rows are
        checked against it and the rows asked are no longer ``available``.  ``"recorded"``
        reads a study whose candidate set is not at hand (the journal keeps only row numbers):
        the recorded row numbers are taken as they are (see :meth:`open`).
    on_failure : {"worst", "ignore", "infeasible"}, default="worst"
        What :attr:`obs` holds for a failed trial: the worst loss observed so far (so that a
        surrogate avoids the region, like SMAC's crash cost), nothing, or a failure (see
        :attr:`obs`).
    config : dict, optional
        Settings recorded with a new study (e.g. ``{"surrogate": "mondrian"}``); the stored
        ones are :attr:`config`.
    direction : {"minimize", "maximize"}, default="minimize"
        Whether the values told are to be minimised or maximised.  It is recorded with a new
        study, and reopening a study with the other direction is refused (a study recorded
        before directions existed minimises).  Trials keep the values as told; :attr:`obs`
        holds losses (the values, negated when maximising) and :attr:`best` is the best trial
        in the study's direction.
    objectives : Objectives, optional
        Several objectives, named objectives or constraints (:class:`~mfbo.study.objectives.
        Objectives`), in place of ``direction``; recorded with a new study and checked when
        one is reopened.  With several objectives :attr:`direction` is None and :attr:`best`
        is None (the best trials are a Pareto front: :func:`mfbo.study.pareto.pareto_trials`);
        with constraints :attr:`best` is the best *feasible* trial.
    on_pruned : {"worst", "shift", "rank"}, default="worst"
        What :attr:`obs` holds for a pruned trial of a study of one objective: the worst loss
        so far (see :attr:`obs`), or its last reported loss carried to the full-budget scale
        by the complete trials that reported the same step (:mod:`mfbo.study.pruned`).  The
        trials themselves are kept as told either way.  Set the attribute of the same name
        only before the first pruned trial is told.

    Attributes
    ----------
    trials : list of Trial
        Every trial in id order (the study's own objects: :meth:`copies` hands out copies).
    obs : Rows
        What a surrogate is fed, in the order trials finished: the unit point and loss (the
        value, negated when maximising) of every complete trial and, with
        ``on_failure="worst"``, of every failed one (the worst loss so far) and of every
        pruned one.  In a study with several objectives or constraints, :attr:`Rows.Y`
        holds one column per objective (its loss) and one per constraint (its value, raw),
        a failed or pruned trial entering with the worst loss so far of each objective and
        the largest value so far of each constraint (at least its range, and above 0: a
        violation).  A pruned trial of one objective enters with the larger of its last
        reported loss and the
        worst loss so far, so that it ranks below the complete trials, as Optuna's TPE ranks
        pruned trials below complete ones: its last value was measured at a smaller budget
        than the complete trials' final values and says little of the final value it did not
        reach, and the pruner stopped it because it looked worse than the others there.  With
        ``on_failure="ignore"``
        neither failed nor pruned trials are fed.  With ``on_failure="infeasible"``
        :attr:`Rows.Y` has one more column (:attr:`n_outcomes`), whether the trial failed:
        +1 for a failed trial, which enters with the other outcomes of the nearest complete
        trial so far (Euclidean in the unit cube; not fed before the first complete trial),
        and -1 for every other row (a pruned trial enters as with ``"worst"``).
    asked : Rows
        Every asked trial's unit point, in trial order.
    owner : str
        This handle's owner token: the trials it asks are its own until it is closed.
    """

    def __init__(self, space, storage=None, study_name: str = "default",
                 candidates: CandidateSet | str | None = None, on_failure: str = "worst",
                 config: dict | None = None, direction: str = "minimize",
                 objectives: Objectives | None = None, on_pruned: str = "worst"):
        if on_failure not in ON_FAILURE:
            raise ValueError(f"on_failure must be one of {list(ON_FAILURE)}, got "
                             f"{on_failure!r}.")
        if on_pruned not in ON_PRUNED:
            raise ValueError(f"on_pruned must be one of {list(ON_PRUNED)}, got {on_pruned!r}.")
        #: what :attr:`obs` holds for a pruned trial (see the parameter)
        self.on_pruned = on_pruned
        if not isinstance(study_name, str) or not study_name:
            raise ValueError(f"study_name must be a non-empty string, got {study_name!r}.")
        if objectives is None:
            objectives = Objectives((check_direction(direction),))
        elif not isinstance(objectives, Objectives):
            raise TypeError(f"objectives must be an Objectives, got {objectives!r}.")
        elif direction != "minimize" and objectives.directions != (direction,):
            raise ValueError("give direction or objectives, not both.")
        #: the objectives and constraints
        self.objectives: Objectives = objectives
        direction = objectives.directions[0] if objectives.k == 1 else None
        recorded = isinstance(candidates, str) and candidates == "recorded"
        if not (recorded or candidates is None or isinstance(candidates, CandidateSet)):
            raise TypeError(f"candidates must be a CandidateSet, None or 'recorded', got "
                            f"{candidates!r}.")
        self.space: Space = as_space(space)
        self.study_name = study_name
        self.candidates = None if recorded else candidates
        self._recorded_candidates = recorded
        self.on_failure = on_failure
        #: ``"minimize"`` or ``"maximize"`` (None with several objectives)
        self.direction = direction
        #: +1 when minimising, -1 when maximising: loss = sign * value (the first objective's)
        self.sign = float(objectives.signs[0])
        self.storage: Storage = as_storage(storage)
        config = {**(config or {}), "direction": objectives.directions[0],
                  **objectives.to_config(),
                  "n_candidates": None if self.candidates is None else len(self.candidates)}
        try:
            stored = self.storage.open_study(study_name, self.space.to_json(), config)
        except RecursionError:
            raise ValueError(f"study {study_name!r}: its stored space or settings are nested "
                             f"too deeply to be read; the storage is damaged.") from None
        if not isinstance(stored, dict):
            raise ValueError(f"study {study_name!r}: its stored settings are not a JSON object "
                             f"(got {shorten(stored, 80)}); the storage is damaged.")
        if not recorded and stored.get("n_candidates") != config["n_candidates"]:
            raise ValueError(f"study {study_name!r} was created with n_candidates="
                             f"{stored.get('n_candidates')}, not {config['n_candidates']}.")
        recorded = stored_objectives(study_name, stored)
        # a study recorded before directions existed minimises
        if objectives.k == 1 and recorded.k == 1 and \
                stored.get("direction", "minimize") != direction:
            raise ValueError(f"study {study_name!r} was created with direction="
                             f"{stored.get('direction', 'minimize')!r}; it cannot be reopened "
                             f"with direction={direction!r}.  Pass direction="
                             f"{stored.get('direction', 'minimize')!r}, or use another "
                             f"study_name or storage.")
        if recorded != objectives:
            raise ValueError(f"study {study_name!r} was created with objectives "
                             f"({recorded.describe()}); it cannot be "
                             f"reopened with ({objectives.describe()}).  Pass the ones it was "
                             f"created with, or use another study_name or storage.")
        self.config: dict = stored
        self._become_owner()
        self._reset()

    def _become_owner(self) -> None:
        """A fresh owner token for this handle, and its heartbeat."""
        self.owner = new_owner()
        weakref.finalize(self, release, self.owner)
        self._beats: tuple[float, dict | None] = (0.0, None)
        self._heartbeat = Heartbeat(self.storage, self.study_name, self.owner)
        if not getattr(self.storage, "read_only", False):
            self._heartbeat.start()
            weakref.finalize(self, self._heartbeat.stop)

    def __getstate__(self):
        """A study in memory pickles with its journal (an optimizer can be saved, or sent to
        another process, and goes on where it was); the copy is a new owner, so trials still
        pending in the original are its own to tell or, once the original is closed, to ask
        again.  A stored study is shared through its storage instead: pickling one would
        copy a database connection."""
        if not isinstance(self.storage, InMemoryStorage):
            raise TypeError(f"a study kept in {type(self.storage).__name__} cannot be pickled; "
                            f"open it again by name where it is needed (Optimizer(space, "
                            f"storage=..., study_name={self.study_name!r})).")
        self.objectives.check_picklable()
        state = self.__dict__.copy()
        for name in ("owner", "_heartbeat", "_beats"):
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        state.setdefault("on_pruned", "worst")  # (pickled before the setting existed)
        self.__dict__.update(state)
        self._become_owner()

    def _reset(self) -> None:
        """Empty state, to be filled by replaying the journal."""
        D = len(self.space)
        self.trials: list[Trial] = []
        self._last_event = 0
        o = self.objectives
        self.obs = Rows(D, None if self.n_outcomes == 1 and o.plain else self.n_outcomes)
        #: the rows of :attr:`obs` that complete trials entered
        self._complete_rows: list[int] = []
        self.obs_origins: list[str | None] = []
        self.asked = Rows(D)
        self.asked_keys: set[bytes] = set()  # row_keys of the asked points
        #: ids of pending trials, in ask order -> the number of observations when asked
        self._pending: dict[int, int] = {}
        self._n_finished = 0
        self._n_pruned = 0
        self._best: Trial | None = None
        self._losses: set[float] = set()  # losses of the complete trials
        self._loss_repeated = False
        #: the row of :attr:`obs` whose loss first repeated a complete trial's (None before)
        self.first_repeat: int | None = None
        self._seen: set[bytes] = set()  # params_key of the asked configurations
        #: candidate rows not yet asked (None without candidates)
        self.available = None if self.candidates is None else self.candidates.first.copy()
        self._queue: dict[int, dict] = {}  # enqueue number -> params, not yet asked, in order
        self._n_enqueued = 0
        self._appended = False

    @classmethod
    def open(cls, storage, study_name: str = "default", on_failure: str = "worst") -> "Study":
        """A study as its storage recorded it (space, direction), replayed; to inspect a study
        without knowing how it was made.  A ``ValueError`` names the studies the storage holds
        when ``study_name`` is not one of them.  A study that searched a candidate set is read with
        the row numbers its trials recorded (the rows themselves are not in the journal).
        A path or URL is opened read-only and must exist (``FileNotFoundError`` names a
        missing file; nothing is created and no heartbeat is written); a :class:`Storage` is
        used as it is."""
        if isinstance(storage, (str, os.PathLike)):
            # to inspect: nothing is created at a mistyped path, and nothing is written
            storage = as_storage(storage, create=False, read_only=True)
        else:
            storage = as_storage(storage)
        try:
            record = storage.stored_study(study_name)
        except RecursionError:
            raise ValueError(f"study {study_name!r}: its stored space or settings are nested "
                             f"too deeply to be read; the storage is damaged.") from None
        if record is None:
            names = storage.studies()
            raise ValueError(f"no study named {study_name!r} in this storage; it holds "
                             f"{names if names else 'no study'}.")
        space_json, config = record
        if not isinstance(config, dict):
            raise ValueError(f"study {study_name!r}: its stored settings are not a JSON object "
                             f"(got {shorten(config, 80)}); the storage is damaged.")
        try:
            if not isinstance(space_json, dict):
                raise TypeError(f"not a JSON object: {shorten(space_json, 80)}")
            space = Space.from_json(space_json)
        except _DAMAGE as exc:
            raise ValueError(f"study {study_name!r}: its stored space cannot be read "
                             f"({shorten(exc)}); the storage is damaged.") from None
        cands = None if config.get("n_candidates") is None else "recorded"
        study = cls(space, storage, study_name, cands, on_failure,
                    objectives=stored_objectives(study_name, config))
        study.refresh()
        return study

    # -- state ---------------------------------------------------------------------------------
    @property
    def n_outcomes(self) -> int:
        """The columns of :attr:`obs`: each objective's loss, each constraint's value and,
        with ``on_failure="infeasible"``, whether the trial failed."""
        return self.objectives.k + self.objectives.m + (self.on_failure == "infeasible")

    @property
    def complete_rows(self) -> np.ndarray:
        """The rows of :attr:`obs` told by complete trials (the others are failed or pruned
        trials' rows, made up as ``on_failure`` and ``on_pruned`` say), in order."""
        return np.asarray(self._complete_rows, dtype=np.int64)

    @property
    def n_trials(self) -> int:
        return len(self.trials)

    @property
    def n_finished(self) -> int:
        return self._n_finished

    @property
    def n_pruned(self) -> int:
        """How many trials were pruned (stopped early)."""
        return self._n_pruned

    @property
    def pending(self) -> list[Trial]:
        """The trials asked and not yet told, in the order they were asked (the study's own
        objects)."""
        return [self.trials[i] for i in self._pending]

    @property
    def n_asked_since_observed(self) -> int:
        """How many of the pending trials were asked since the latest observation (0: the next
        proposal is the first made from the observations as they are)."""
        n = self.obs.n
        return sum(1 for at in self._pending.values() if at == n)

    @property
    def loss_repeated(self) -> bool:
        """Whether two complete trials have exactly the same value (the objective has
        plateaus; failed trials do not count)."""
        return self._loss_repeated

    @property
    def best(self) -> Trial | None:
        """The complete trial with the best value in the study's direction (the first of
        ties); with constraints the best feasible one; None with several objectives."""
        return self._best

    @property
    def queued(self) -> list[dict]:
        """Copies of the configurations enqueued and not yet asked, in the order they will be
        asked."""
        return [dict(p) for p in self._queue.values()]

    def seen(self, params: dict) -> bool:
        """Whether the configuration ``params`` has been asked."""
        return params_key(params) in self._seen

    @staticmethod
    def copies(trials) -> list[Trial]:
        """Copies of ``trials`` for a caller: editing them cannot change the study."""
        return [public(t) for t in trials]

    # -- journal -------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Replay the events appended since the last replay (by this or other processes)."""
        events = read_in_pages(self.storage, self.study_name, self._last_event)
        while True:
            try:
                eid, kind, p = next(events)
            except StopIteration:
                break
            except RecursionError:
                raise ValueError(f"study {self.study_name!r}: a journal event after event "
                                 f"{self._last_event} is nested too deeply to be read; the "
                                 f"journal is damaged.") from None
            try:
                self._apply(kind, p)
            except CandidatesDiffer:
                raise
            except _DAMAGE as exc:
                raise ValueError(f"study {self.study_name!r}: journal event {eid} ({kind!r}) is "
                                 f"invalid: {shorten(exc)}") from None
            self._last_event = eid

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """The storage's exclusive section.  If it raises after events were appended, the
        storage drops them, and the study is replayed again from the journal's start so that
        it is exactly what the storage holds."""
        self._appended = False
        try:
            with self.storage.transaction(self.study_name):
                yield
        except BaseException:
            if self._appended:
                self._reset()
                self.refresh()
            raise

    def atomic(self, fn):
        """``fn()`` inside :meth:`transaction`, after reading every committed event; tried
        again, from a fresh read, while the storage cannot be reached (a database restarting),
        for up to the storage's ``retry_timeout`` seconds."""
        def attempt():
            with self.transaction():
                self.refresh()
                return fn()

        return retrying(attempt, getattr(self.storage, "retry_timeout", 0.0))

    def _append(self, kind: str, payload: dict) -> None:
        self._appended = True
        self.storage.append(self.study_name, kind, payload)
        self.refresh()

    def add(self, params: dict, unit: np.ndarray, candidate: int | None,
            origin: str | None = None, enqueued: int | None = None) -> Trial:
        """Record a new pending trial owned by this handle (inside :meth:`transaction`);
        ``origin``: what proposed it (:attr:`Trial.origin`); ``enqueued``: the number of the
        queued configuration it takes (its origin is then ``"enqueued"``)."""
        number = len(self.trials)
        payload = {"id": number, "params": params, "unit": unit.tolist(),
                   "candidate": candidate, "owner": self.owner, "time": time.time()}
        if enqueued is not None:
            payload["enqueued"] = int(enqueued)
            origin = "enqueued"
        if origin is not None:
            payload["origin"] = str(origin)
        self._append("ask", payload)
        return self.trials[number]

    def _unit_and_candidate(self, params: dict) -> tuple[np.ndarray, int | None]:
        unit = self.space.to_unit([params])[0]
        return unit, None if self.candidates is None else self.candidates.index_of(unit)

    def enqueue(self, configs, skip_existing: bool = False) -> int:
        """Queue configurations (a params dict or a list of them) to be asked before any
        proposal, in order; durable like every event.  With ``skip_existing`` those already
        asked or queued are left out.  Every configuration is checked before anything is
        recorded.  Returns how many were queued."""
        checked = checked_configurations(self.space, configs, "params")

        def put() -> int:
            n = 0
            known = {params_key(p) for p in self._queue.values()} if skip_existing else set()
            for params in checked:
                key = params_key(params)
                if skip_existing and (key in self._seen or key in known):
                    continue
                known.add(key)
                self._append("enqueue", {"number": self._n_enqueued, "params": params,
                                         "time": time.time()})
                n += 1
            return n

        return self.atomic(put)

    def take_queued(self, count: int) -> list[Trial]:
        """Ask up to ``count`` queued configurations, in order, as new pending trials (inside
        :meth:`transaction`)."""
        out = []
        for number, params in list(self._queue.items())[:count]:
            unit, cand = self._unit_and_candidate(params)
            out.append(self.add(params, unit, cand, enqueued=number))
        return out

    def reclaim(self, count: int) -> list[Trial]:
        """Claim up to ``count`` pending trials whose owner is gone (inside
        :meth:`transaction`)."""
        out = []
        if not count or not self._pending:
            return out
        beats = self._heartbeats()
        for i in list(self._pending):
            t = self.trials[i]
            if len(out) == count:
                break
            age, limit = None, None
            if t.owner in beats:
                age, interval = beats[t.owner]
                limit = max(self.storage.grace_period, GRACE_BEATS * interval)
            if not owner_alive(t.owner, age, limit):
                self._append("claim", {"id": t.id, "owner": self.owner})
                out.append(t)
        return out

    def _heartbeats(self) -> dict[str, tuple[float, float]]:
        """The storage's heartbeats of this study, read at most once a second (the ages aged
        by the time since): a liveness judged a second late loses nothing, and a busy study
        with many workers saves a query per ask."""
        now = time.monotonic()
        read_at, beats = self._beats
        if beats is None or now - read_at > HEARTBEAT_READ_EVERY:
            beats = self.storage.heartbeats(self.study_name)
            self._beats = (now, beats)
            return beats
        return {owner: (age + now - read_at, interval)
                for owner, (age, interval) in beats.items()}

    def tell(self, trial, state: str, value: float | None, extra: dict, error: str | None,
             start: float | None, end: float | None, worker: str | None,
             values: tuple | None = None, constraints: tuple | None = None) -> Trial:
        """Finish a trial (a :class:`Trial`, its id, or a params dict of a configuration
        evaluated outside the study, recorded as a new trial); bad input raises before anything
        is recorded.  In a study of several objectives or with constraints a complete trial
        is told its ``values`` (one per objective) and ``constraints`` (one per constraint)."""
        plain = self.objectives.plain
        if state == "complete" and not plain:
            values, constraints = self.objectives.check_told(
                list(values or ()), None if constraints is None else list(constraints))
            value = values[0] if self.objectives.k == 1 else None

        if state == "pruned" and isinstance(trial, Mapping):
            raise ValueError("a trial told pruned must be a Trial or a trial id: it was asked "
                             "and reported to, not evaluated outside the study.")

        def record() -> Trial:
            if isinstance(trial, Mapping):
                params = self.space.validate(trial)
                number = self.add(params, *self._unit_and_candidate(params)).id
            else:
                number = self.pending_trial(trial, "a params dict").id
            now = time.time()
            payload = {
                "id": int(number), "state": state, "value": value, "extra": extra,
                "error": error, "start": start, "end": end if end is not None else now,
                "worker": worker}
            if state == "complete" and not plain:
                payload["values"] = list(values)
                if constraints is not None:
                    payload["constraints"] = list(constraints)
            self._append("tell", payload)
            return self.trials[number]

        return self.atomic(record)

    def pending_trial(self, trial, also: str | None = None) -> Trial:
        """The study's own pending trial that ``trial`` (a :class:`Trial` or its id) names;
        a ``TypeError``/``ValueError`` naming the argument for anything else (``also``: what
        else the caller takes, for the message), :class:`TrialFinished` for a trial told
        already."""
        number = trial.id if isinstance(trial, Trial) else trial
        if not isinstance(number, numbers.Integral) or isinstance(number, bool):
            what = f", a trial id or {also}" if also else " or its id"
            raise TypeError(f"trial must be a Trial{what}, got {shorten(repr(trial), 80)}.")
        if not 0 <= number < len(self.trials):
            raise ValueError(f"unknown trial id {number}; this study has "
                             f"{len(self.trials)} trials.")
        t = self.trials[number]
        if t.state != "pending":
            raise TrialFinished(f"trial {number} was already told ({t.state}).")
        if isinstance(trial, Trial) and trial.params != t.params:
            raise ValueError(f"trial {number}'s params differ from those it was asked with.")
        return t

    def report(self, trial, step, value) -> bool:
        """Record ``value`` (finite, in the values' own units) measured by the pending
        ``trial`` at ``step`` (a non-negative integer); durable like every event.  A step
        reported already is not recorded again: as Optuna does, the first value is kept, with
        a ``UserWarning``, and False is returned (True when recorded).  Bad input raises before
        anything is recorded."""
        step = check_int(step, "step", minimum=0)
        value = finite(value, "value")

        def record() -> bool:
            t = self.pending_trial(trial)
            if step in t.intermediate_values:
                warnings.warn(f"trial {t.id} reported step {step} already (value "
                              f"{t.intermediate_values[step]!r}); the value {value!r} is "
                              f"ignored.", UserWarning, stacklevel=4)
                return False
            self._append("report", {"id": t.id, "step": step, "value": value})
            return True

        return self.atomic(record)

    def record_rung(self, trial: Trial, rung: int, value: float) -> None:
        """Record that the pending ``trial`` reached ``rung`` (the next one it had not
        reached) with ``value``; inside :meth:`transaction` (a pruner's decision and its
        record are one step for every process sharing the study)."""
        self._append("rung", {"id": trial.id, "rung": int(rung), "value": float(value)})

    def close(self) -> None:
        """This handle tells no more trials: its pending ones become orphans."""
        release(self.owner)
        self._heartbeat.stop()

    # -- replay of one event -------------------------------------------------------------------
    def _trial_of(self, p: Mapping, pending: bool) -> Trial:
        i = p["id"]
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self.trials):
            raise ValueError(f"no trial with id {shorten(repr(i), 40)}")
        t = self.trials[i]
        if pending and t.state != "pending":
            raise ValueError(f"trial {i} was already told ({t.state})")
        return t

    def _checked_ask(self, p: Mapping) -> Trial:
        """The trial an ``ask`` event records, checked against the space and the study."""
        i = p["id"]
        if not isinstance(i, int) or isinstance(i, bool) or i != len(self.trials):
            raise ValueError(f"trial id {shorten(repr(i), 40)} out of order (expected "
                             f"{len(self.trials)})")
        params = self.space.validate(p["params"])
        unit = np.asarray(p["unit"], dtype=float)
        inside = (unit >= 0) & (unit <= 1) | (unit == self.space.inactive_unit)
        if unit.shape != (len(self.space),) or not np.all(inside):
            raise ValueError(f"unit point {p['unit']!r} is not a point of the unit cube with "
                             f"{len(self.space)} coordinates")
        # the point of record is the encoding of the params (up to rounding)
        if np.abs(self.space.to_unit([params])[0] - unit).max() > 1e-9:
            raise ValueError(f"unit point {p['unit']!r} does not encode params {params!r}")
        cand = p.get("candidate")
        if cand is not None and self._recorded_candidates:
            if not isinstance(cand, int) or isinstance(cand, bool) or cand < 0:
                raise ValueError(f"candidate {cand!r} is not a row number")
        elif cand is not None and (self.candidates is None or not isinstance(cand, int)
                                   or isinstance(cand, bool)
                                   or not 0 <= cand < len(self.candidates)
                                   or not np.array_equal(self.candidates.U[cand], unit)):
            where = None if self.candidates is None else self.candidates.index_of(unit)
            if isinstance(cand, int) and self.candidates is not None:
                # a well-formed row of another candidate set: the caller's, not the journal's
                raise CandidatesDiffer(
                    f"study {self.study_name!r}: trial {p['id']} was asked as candidate row "
                    f"{cand}, which is " + (
                        f"row {where} of the candidates given: they are the study's rows in "
                        f"another order" if where is not None else
                        "not among the candidates given: they differ from the study's") +
                    "; pass the candidates the study was created with, in their order.")
            raise ValueError(f"candidate {cand!r} is not the candidate row of this point")
        if p["owner"] is not None and not isinstance(p["owner"], str):
            raise TypeError(f"owner must be a string, got {p['owner']!r}")
        queued = p.get("enqueued")
        if queued is not None:
            if not isinstance(queued, int) or isinstance(queued, bool) \
                    or queued not in self._queue:
                raise ValueError(f"enqueued configuration {queued!r} is not in the queue")
            if self._queue[queued] != params:
                raise ValueError(f"params {params!r} are not those of enqueued configuration "
                                 f"{queued}")
        origin = p.get("origin")
        if origin is not None and not isinstance(origin, str):
            raise TypeError(f"origin must be a string, got {shorten(repr(origin), 40)}")
        return Trial(id=p["id"], params=params, asked_at=finite(p["time"], "time"),
                     owner=p["owner"], candidate=cand, unit=unit, origin=origin)

    @staticmethod
    def _checked_tell(p: Mapping, objectives: Objectives | None = None) -> dict:
        """The fields a ``tell`` event of a study of ``objectives`` (None: one value, no
        constraint) sets, checked."""
        state, value, extra, error = p["state"], p["value"], p["extra"], p["error"]
        values = constraints = None
        objectives = objectives or Objectives()
        if state == "complete" and not objectives.plain:
            values, constraints = objectives.check_told(p["values"], p.get("constraints"))
            if value != (values[0] if objectives.k == 1 else None):
                raise ValueError(f"value {shorten(repr(value), 40)} is not that of values")
        elif state == "complete":
            finite(value, "value")
            values = (float(value),)
        elif state in ("failed", "pruned"):
            if value is not None:
                raise ValueError(f"a {state} trial has no value, got {shorten(repr(value), 40)}")
        else:
            raise ValueError(f"state must be 'complete', 'failed' or 'pruned', got "
                             f"{shorten(repr(state), 40)}")
        if not isinstance(extra, dict):
            raise TypeError(f"extra must be a dict, got {extra!r}")
        if error is not None and not isinstance(error, str):
            raise TypeError(f"error must be a string, got {error!r}")
        times = {k: p.get(k) for k in ("start", "end")}
        for k, v in times.items():
            if v is not None:
                finite(v, k)
        worker = p.get("worker")
        if worker is not None and not isinstance(worker, str):
            raise TypeError(f"worker must be a string, got {worker!r}")
        return {"state": state, "value": None if value is None else float(value),
                "extra": extra, "error": error, "worker": worker, "values": values,
                "constraints": constraints, **times}

    def _observe(self, t: Trial) -> None:
        """What a told trial adds to :attr:`obs` (see its description) and to the best
        trial."""
        o = self.objectives
        if t.state == "complete":
            if o.k == 1 and t.feasible and (self._best is None or (
                    self.sign * t.value, t.id) < (self.sign * self._best.value, self._best.id)):
                self._best = t
            row = self.sign * t.value if o.plain else np.concatenate(
                [o.signs * np.asarray(t.values), np.asarray(t.constraints or (), dtype=float)])
            loss = row if o.plain else row[0]
            if not self._loss_repeated and loss in self._losses:
                self._loss_repeated, self.first_repeat = True, self.obs.n
            self._losses.add(loss)
            if self.on_failure == "infeasible":
                row = np.append(row, -1.0)
            self._complete_rows.append(self.obs.n)
        elif self.on_failure == "ignore":
            return
        elif self.on_failure == "infeasible" and t.state == "failed":
            if not self._complete_rows:
                return
            # the outcomes of the nearest complete trial, and a failure
            rows = np.asarray(self._complete_rows)
            near = rows[np.argmin(((self.obs.X[rows] - t.unit) ** 2).sum(axis=1))]
            row = self.obs.Y[near].copy()
            row[-1] = 1.0
        else:
            row = self._worst_row(t)
            if row is None:
                return
            if self.on_failure == "infeasible":  # (a pruned trial: not a failure)
                row = np.append(row, -1.0)
        self.obs.append(t.unit, row)
        self.obs_origins.append(t.origin)

    def _worst_row(self, t: Trial):
        """What a failed or pruned trial ``t`` enters :attr:`obs` with as ``"worst"`` has it
        (None: nothing yet to compare with): the worst loss so far of each objective (of a
        study of one value, a pruned trial at least its last reported loss) and the largest
        value so far of each constraint (at least its range, and above 0: a violation)."""
        o = self.objectives
        if o.plain and t.state == "pruned" and self.on_pruned != "worst":
            loss = carried_loss(self.on_pruned, self.trials, t, self.sign)
            if loss is not None:
                return loss
        if o.plain:
            losses = [float(self.obs.y.max())] if self.obs.n else []
            if t.state == "pruned" and t.intermediate_values:
                losses.append(self.sign * t.intermediate_values[t.last_step])
            return max(losses) if losses else None
        if not self.obs.n:
            return None
        Y = self.obs.Y[:, :o.k + o.m]
        row = Y.max(axis=0)
        if o.m:
            top, spread = Y[:, o.k:].max(axis=0), np.ptp(Y[:, o.k:], axis=0)
            row[o.k:] = np.where(np.maximum(top, spread) > 0, np.maximum(top, spread), 1.0)
        return row

    def _apply(self, kind: str, p: dict) -> None:
        if not isinstance(p, Mapping):
            raise TypeError(f"payload must be a JSON object, got {p!r}")
        if kind == "ask":
            t = self._checked_ask(p)
            self._queue.pop(p.get("enqueued"), None)
            unit = t.unit
            self.trials.append(t)
            self.asked.append(unit)
            self.asked_keys.add(row_keys(unit[None, :])[0])
            self._pending[t.id] = self.obs.n
            if t.candidate is not None and self.available is not None:
                self.available[t.candidate] = False
            self._seen.add(params_key(t.params))
        elif kind == "claim":
            t = self._trial_of(p, pending=True)
            if not isinstance(p["owner"], str):
                raise TypeError(f"owner must be a string, got {p['owner']!r}")
            t.owner = p["owner"]
        elif kind == "tell":
            t = self._trial_of(p, pending=True)
            f = self._checked_tell(p, self.objectives)
            t.state, t.value, t.extra, t.error = f["state"], f["value"], f["extra"], f["error"]
            t.start, t.end, t.worker = f["start"], f["end"], f["worker"]
            t.values, t.constraints = f["values"], f["constraints"]
            self._pending.pop(t.id, None)
            self._n_finished += 1
            self._n_pruned += t.state == "pruned"
            self._observe(t)
        elif kind == "report":
            t = self._trial_of(p, pending=True)
            step = check_int(p["step"], "step", minimum=0)
            if step in t.intermediate_values:
                raise ValueError(f"trial {t.id} reported step {step} already")
            t.intermediate_values[step] = finite(p["value"], "value")
        elif kind == "rung":
            t = self._trial_of(p, pending=True)
            rung = check_int(p["rung"], "rung", minimum=0)
            if rung != len(t.rungs):
                raise ValueError(f"trial {t.id} reaches rung {rung} out of order (expected "
                                 f"{len(t.rungs)})")
            t.rungs[rung] = finite(p["value"], "value")
        elif kind == "enqueue":
            number = p["number"]
            if not isinstance(number, int) or isinstance(number, bool) \
                    or number != self._n_enqueued:
                raise ValueError(f"enqueue number {number!r} out of order (expected "
                                 f"{self._n_enqueued})")
            self._queue[number] = self.space.validate(p["params"])
            self._n_enqueued += 1
        else:
            raise ValueError(f"unknown kind of event {kind!r}")
