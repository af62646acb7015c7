"""The ask/tell optimizer: one study, one surrogate updated online after every tell.

The optimizer's state is a replay of its journal (:mod:`mfbo.storage`): an ``ask`` appends a
pending trial, a ``tell`` finishes it, and every method first reads the events that other
processes appended, so several processes sharing a storage file share one study.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import numbers
import os
import socket
import time
import uuid
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from acquisitions import (finite_size, enumerate_grid, make_acquisition,
                          maximize_over_candidates, maximize_random_local, row_keys, snap)

from .models import Model, make_model
from .space import Space, as_space
from .storage import Storage, as_storage

__all__ = ["Trial", "Optimizer", "StudyExhausted"]

#: fully discrete spaces up to this size are enumerated exactly as a candidate set
MAX_ENUMERATED = 100_000

_LIVE_OWNERS: set[str] = set()
_HOST = socket.gethostname()


class StudyExhausted(RuntimeError):
    """Raised by :meth:`Optimizer.ask` when every candidate has been evaluated or is pending."""


@dataclass
class Trial:
    """One evaluation of the objective.

    ``id`` numbers the trials of a study from 0 in the order they were asked; ``params`` is the
    configuration as a dict; ``state`` is ``"pending"``, ``"complete"`` or ``"failed"``;
    ``value`` is the loss (None unless complete); ``extra`` holds the other fields of a dict
    returned by the objective; ``error`` the text of a failure.
    """

    id: int
    params: dict
    state: str = "pending"
    value: float | None = None
    extra: dict = field(default_factory=dict)
    error: str | None = None
    asked_at: float = 0.0
    start: float | None = None
    end: float | None = None
    worker: str | None = None
    owner: str | None = None
    candidate: int | None = None
    unit: np.ndarray | None = field(default=None, repr=False)

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return self.end - self.start


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _process_start(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``), or ``""`` where
    that is unknown.  With the pid it names one process: pids are reused, start times not."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2:].split()[19].decode()
    except (OSError, ValueError, IndexError):
        return ""


def _owner_host(owner: str | None) -> str | None:
    return owner.split(":", 1)[0] if owner else None


def _owner_alive(owner: str | None) -> bool:
    """Whether the optimizer that asked a pending trial may still tell it.

    An owner is ``host:pid:start:token`` (``host:pid:token`` in older studies).  In this
    process it is alive while that optimizer exists; on this host while a process with that
    pid and start time exists; on other hosts it is assumed alive."""
    if not owner:
        return False
    parts = owner.split(":")
    if len(parts) not in (3, 4):
        return False
    host, pid = parts[0], parts[1]
    try:
        pid = int(pid)
    except ValueError:
        return False
    if host != _HOST:
        return True
    if pid == os.getpid():
        return owner in _LIVE_OWNERS
    if not _pid_alive(pid):
        return False
    started = parts[2] if len(parts) == 4 else ""
    return not started or _process_start(pid) in ("", started)


def _public(t: Trial) -> Trial:
    """A copy of a trial for the caller: editing it cannot change the study."""
    return dataclasses.replace(t, params=dict(t.params), extra=copy.deepcopy(t.extra),
                               unit=None if t.unit is None else t.unit.copy())


def _seed_sequence(random_state) -> np.random.SeedSequence:
    """The seed of a study from ``random_state`` (None, an int >= 0, a SeedSequence, or a
    numpy Generator / RandomState, from which a seed is drawn)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63 - 1, size=2).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(
            random_state.randint(0, 2**63 - 1, size=2, dtype=np.int64).tolist())
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}.")
        return np.random.SeedSequence(int(random_state))
    raise TypeError(f"random_state must be None, an int, a SeedSequence or a numpy "
                    f"Generator/RandomState, got {random_state!r}.")


def _finite(v, what: str) -> float:
    if not _is_number(v):
        raise TypeError(f"{what} must be a number, got {v!r}.")
    if not math.isfinite(float(v)):
        raise ValueError(f"{what} must be finite, got {v!r}.")
    return float(v)


class _Rows:
    """Unit-cube rows and one value per row, appended one at a time (amortised O(1)); ``X``
    and ``y`` are views of the filled part (rows never change once written)."""

    def __init__(self, n_dims: int):
        self._X = np.empty((16, n_dims))
        self._y = np.empty(16)
        self.n = 0

    def append(self, unit: np.ndarray, value: float = np.nan) -> None:
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
        return self._y[:self.n]


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def parse_outcome(value) -> tuple[str, float | None, dict, str | None]:
    """``(state, loss, extra, error)`` from what an objective returned.

    A float (or numpy scalar) is the loss; a dict needs a ``"loss"`` key, the other keys are
    kept as extra fields; an exception, ``None``, a non-finite loss or anything else is a
    failed trial with the reason as error text."""
    extra: dict = {}
    if isinstance(value, BaseException):
        return "failed", None, extra, f"{type(value).__name__}: {value}"
    if isinstance(value, Mapping):
        extra = {k: v for k, v in value.items() if k != "loss"}
        if "loss" not in value:
            return "failed", None, extra, "objective returned a dict without a 'loss' key"
        value = value["loss"]
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if not _is_number(value):
        return "failed", None, extra, f"objective returned {value!r}, not a number"
    v = float(value)
    if not math.isfinite(v):
        return "failed", None, extra, f"objective returned a non-finite loss ({v})"
    return "complete", v, extra, None


class Optimizer:
    """Ask/tell Bayesian optimization with an online surrogate.

    Parameters
    ----------
    space : dict or Space
        ``name -> Real/Integer/Categorical``; ``(low, high)`` is a :class:`~mfbo.Real`.
    surrogate : {"mondrian", "rf-smac", "random"} or estimator, default="mondrian"
        ``"mondrian"``: the online Mondrian regression forest (10 trees, min_samples_split 2,
        empirical posterior; each tell is one ``partial_fit``).  ``"rf-smac"``: SMAC3 2.4's
        HPO-facade random forest (log-scaled losses, log-EI, 20 % random interleaving, refit
        every 8 observations; ``surrogate_options={"retrain_after": 1}`` refits every time).
        ``"random"``: random search.  Any object with ``fit`` and
        ``predict(X, return_std=True)`` (optionally ``partial_fit``, ``predict_per_tree``) is
        used on unit-cube inputs.
    acquisition : {"ucb", "ei", "logei", "pi", "thompson", "lognormal-ei"} or None
        ``None``: the surrogate's default (``"ucb"``, i.e. mean - kappa * std of the loss, for
        the Mondrian forest as in the papers; ``"lognormal-ei"`` for ``"rf-smac"``).
    candidates : array-like, DataFrame or list of dicts, optional
        A finite set of configurations (columns/keys = the space's names).  The acquisition is
        then maximised by exact enumeration over the rows not yet evaluated or pending, and a
        row is never proposed twice.  Fully discrete spaces with at most 100,000 points are
        enumerated this way automatically.
    random_state : int or None
        Seeds the initial design, the surrogate and every proposal (proposal ``i`` uses its own
        stream, so a study is reproducible and parallel processes do not collide).
    n_initial : int or None
        Size of the initial design; ``None``: the surrogate's default (
        ``10 * D`` as SMAC3; :func:`mfbo.minimize` caps it at a quarter of ``n_calls`` like
        SMAC3).
    initial_design : {"sobol", "random", "lhs"}, default="sobol"
        Kind of initial design; with ``candidates`` the available row nearest to each design
        point is taken.
    kappa, xi : float
        Exploration weights of UCB (default 1, the papers') and of EI/PI (default 0).
    batch_strategy : {"constant_liar", "thompson"}, default="constant_liar"
        How pending trials are accounted for when more are asked before they are told:
        ``"constant_liar"`` lets a copy of the surrogate believe each pending point has the
        loss given by ``liar`` (``"min"``, ``"mean"`` or ``"max"`` of the observed losses);
        ``"thompson"`` gives each proposal its own draw (one tree of the forest).
    on_failure : {"worst", "ignore"}, default="worst"
        What the surrogate sees for a failed trial: the worst loss observed so far (so the
        region is avoided, like SMAC's crash cost) or nothing.
    n_random_candidates : int or None, default=None
        Random/Sobol points scored per proposal in continuous or mixed spaces before local
        search.  None: the surrogate's choice (SMAC3's 10,000 for RF-SMAC; 2,000 for the
        Mondrian forest, whose local searches also stop once their gains are negligible --
        see :class:`mfbo.models.MondrianModel`).
    local_search : bool or dict, default=True
        Refine the best random points by local search.  A dict sets the stopping rule:
        ``{"patience": k, "min_improvement": r}`` stops a search after ``k`` rounds whose gain
        is at most ``r`` times the random points' score spread; missing keys take the
        surrogate's values (RF-SMAC: SMAC3's 10 rounds, any gain; Mondrian: 3 rounds, 1e-3).
    surrogate_options : dict, optional
        Keyword arguments for a named surrogate (e.g. ``{"posterior": "bp"}``,
        ``{"n_estimators": 20}``, ``{"retrain_after": 1}``).
    storage : None, path or Storage
        ``None``: in memory.  A path such as ``"study.db"``: a durable SQLite journal; opening
        an existing study resumes it (finished trials are replayed into the surrogate, pending
        trials whose process died are asked again).
    study_name : str, default="default"
        Several studies can share one storage file.
    min_distance : float, default=0
        In continuous and mixed spaces, skip proposals closer than this (max-norm in the unit
        cube) to an evaluated or pending point.  Exact repeats are always excluded.
    neighbourhood : {None, "one-exchange", "joint"}, default=None
        Local-search moves in continuous coordinates: SMAC's one coordinate at a time, or all
        continuous coordinates together (Gaussian steps).  None: the surrogate's choice
        (``"joint"`` for the Mondrian forest, whose axis-aligned cells otherwise make the search
        crawl along one axis at a time; ``"one-exchange"`` for RF-SMAC, as in SMAC3).
    """

    def __init__(self, space, surrogate="mondrian", acquisition=None, candidates=None,
                 random_state=None, n_initial=None, initial_design="sobol", kappa=1.0, xi=0.0,
                 batch_strategy="constant_liar", liar="min", on_failure="worst",
                 n_random_candidates=None, local_search=True, surrogate_options=None,
                 storage=None, study_name="default", min_distance=0.0,
                 neighbourhood=None):
        self.space: Space = as_space(space)
        D = len(self.space)
        if batch_strategy not in ("constant_liar", "thompson"):
            raise ValueError(f"batch_strategy must be 'constant_liar' or 'thompson', got "
                             f"{batch_strategy!r}.")
        if liar not in ("min", "mean", "max"):
            raise ValueError(f"liar must be 'min', 'mean' or 'max', got {liar!r}.")
        if on_failure not in ("worst", "ignore"):
            raise ValueError(f"on_failure must be 'worst' or 'ignore', got {on_failure!r}.")
        if initial_design not in ("sobol", "random", "lhs"):
            raise ValueError(f"initial_design must be 'sobol', 'random' or 'lhs', got "
                             f"{initial_design!r}.")
        if n_initial is not None and (not isinstance(n_initial, numbers.Integral)
                                      or isinstance(n_initial, bool) or n_initial < 1):
            raise ValueError(f"n_initial must be a positive integer or None, got {n_initial!r}.")
        if n_random_candidates is not None and (
                not isinstance(n_random_candidates, numbers.Integral)
                or isinstance(n_random_candidates, bool) or n_random_candidates < 1):
            raise ValueError(f"n_random_candidates must be a positive integer or None, got "
                             f"{n_random_candidates!r}.")
        if not isinstance(study_name, str) or not study_name:
            raise ValueError(f"study_name must be a non-empty string, got {study_name!r}.")
        self.batch_strategy = batch_strategy
        self.liar = liar
        self.on_failure = on_failure
        self.initial_design = initial_design
        if isinstance(local_search, Mapping):
            unknown = set(local_search) - {"patience", "min_improvement"}
            if unknown:
                raise ValueError(f"local_search has unknown key(s) {sorted(unknown)}; expected "
                                 f"'patience' and/or 'min_improvement'.")
            p = local_search.get("patience", 1)
            r = local_search.get("min_improvement", 0.0)
            if not isinstance(p, numbers.Integral) or isinstance(p, bool) or p < 1:
                raise ValueError(f"local_search['patience'] must be a positive integer, got "
                                 f"{p!r}.")
            if not isinstance(r, numbers.Real) or isinstance(r, bool) or not 0 <= r < np.inf:
                raise ValueError(f"local_search['min_improvement'] must be a finite number "
                                 f">= 0, got {r!r}.")
            self._local_search_options = dict(local_search)
        elif isinstance(local_search, bool):
            self._local_search_options = {}
        else:
            raise TypeError(f"local_search must be a bool or a dict, got {local_search!r}.")
        self.local_search = local_search is not False
        if not (isinstance(min_distance, numbers.Real) and 0 <= min_distance < 1):
            raise ValueError(f"min_distance must be in [0, 1), got {min_distance!r}.")
        self.min_distance = float(min_distance)
        if neighbourhood not in (None, "one-exchange", "joint"):
            raise ValueError(f"neighbourhood must be None, 'one-exchange' or 'joint', got "
                             f"{neighbourhood!r}.")
        self._neighbourhood = neighbourhood
        self.study_name = study_name
        kappa, xi = _finite(kappa, "kappa"), _finite(xi, "xi")

        ss = _seed_sequence(random_state)
        self._entropy = ss.entropy
        self.model: Model = make_model(surrogate, D, ss.spawn(1)[0], surrogate_options)
        acq_name = acquisition if acquisition is not None else self.model.default_acquisition
        self.acquisition = make_acquisition(acq_name, kappa=kappa, xi=xi)
        if (self.acquisition.thompson or batch_strategy == "thompson") and \
                self.model.is_informative and not hasattr(self.model, "predict_per_tree"):
            raise ValueError("Thompson sampling needs a surrogate with predict_per_tree.")
        self.n_random_candidates = int(self.model.n_random_candidates if
                                       n_random_candidates is None else n_random_candidates)
        if n_initial is None:
            n_initial = type(self.model).default_n_initial(D)
        self.n_initial = int(n_initial)

        self._set_candidates(candidates)

        self.storage: Storage = as_storage(storage)
        config = {"surrogate": surrogate if isinstance(surrogate, str) else repr(surrogate),
                  "n_candidates": None if self._cand_U is None else int(self._cand_U.shape[0])}
        stored = self.storage.open_study(study_name, self.space.to_json(), config)
        if stored.get("n_candidates") != config["n_candidates"]:
            raise ValueError(f"study {study_name!r} was created with n_candidates="
                             f"{stored.get('n_candidates')}, not {config['n_candidates']}.")
        before = stored.get("surrogate")
        if isinstance(surrogate, str) and isinstance(before, str) and before != surrogate:
            warnings.warn(f"study {study_name!r} was run with surrogate={before!r}; it goes on "
                          f"with surrogate={surrogate!r}.", UserWarning, stacklevel=2)

        self.owner = f"{_HOST}:{os.getpid()}:{_process_start(os.getpid())}:" \
                     f"{uuid.uuid4().hex[:12]}"
        _LIVE_OWNERS.add(self.owner)
        weakref.finalize(self, _LIVE_OWNERS.discard, self.owner)

        self._fed = 0
        self._init_U: np.ndarray | None = None
        self._reset_study()
        self._sync()
        self._feed_model()
        elsewhere = sorted({_owner_host(t.owner) for t in self._pending_trials()
                            if _owner_host(t.owner) != _HOST})
        if elsewhere:
            k = sum(_owner_host(t.owner) != _HOST for t in self._pending_trials())
            warnings.warn(f"study {study_name!r} has {k} pending trial(s) asked on other hosts "
                          f"({', '.join(elsewhere)}); they are taken to be still running and are "
                          f"not asked again.", UserWarning, stacklevel=2)

    def _reset_study(self) -> None:
        """Empty study state, to be filled by replaying the journal (the model is kept: it
        has seen the first ``_fed`` observations, which a replay reproduces)."""
        D = len(self.space)
        self.trials: list[Trial] = []
        self._last_event = 0
        self._obs = _Rows(D)  # what the surrogate is fed: complete (and failed) trials
        self._asked = _Rows(D)  # every asked trial's unit point, in trial order
        self._asked_keys: set[bytes] = set()  # their row_keys
        self._pending: dict[int, None] = {}  # ids of pending trials, in ask order
        self._n_finished = 0
        self._best: Trial | None = None
        self._seen_keys: set[bytes] = set()
        if self._cand_U is not None:
            self._available = self._cand_first.copy()

    def _append(self, kind: str, payload: dict) -> None:
        self._appended = True
        self.storage.append(self.study_name, kind, payload)

    def _rebuild(self) -> None:
        """Replay the journal from its start: after a failed ask or tell, whose events the
        storage rolled back, the study is again exactly what the storage holds."""
        self._reset_study()
        self._sync()

    # -- candidates ---------------------------------------------------------------------------
    def _set_candidates(self, candidates) -> None:
        self._cand_rows = None
        if candidates is None:
            if finite_size(self.space.levels) <= MAX_ENUMERATED and np.all(
                    self.space.levels != 0):
                self._cand_U = enumerate_grid(self.space.levels)
            else:
                self._cand_U = None
        else:
            if hasattr(candidates, "columns"):
                missing = [n for n in self.space.names if n not in candidates.columns]
                if missing:
                    raise ValueError(f"candidates lack column(s) {missing}.")
                cols = list(candidates.columns)
                twice = sorted({n for n in self.space.names if cols.count(n) > 1})
                if twice:
                    raise ValueError(f"candidates have duplicate column(s) {twice}.")
                rows = candidates[self.space.names]
                self._cand_U = self.space.array_to_unit(rows.to_numpy())
                self._cand_rows = rows.to_numpy()
            elif isinstance(candidates, (list, tuple)) and candidates and isinstance(
                    candidates[0], Mapping):
                self._cand_U = self.space.to_unit(list(candidates))
                self._cand_rows = np.array([[r[n] for n in self.space.names] for r in candidates],
                                           dtype=object)
            else:
                arr = np.asarray(candidates)
                self._cand_U = self.space.array_to_unit(arr)
                self._cand_rows = arr
            if self._cand_U.shape[0] == 0:
                raise ValueError("candidates must have at least one row.")
        if self._cand_U is not None:
            # a row repeated in the candidates is one configuration: only its first copy
            # can be proposed
            self._cand_first = np.zeros(self._cand_U.shape[0], dtype=bool)
            self._cand_first[np.unique(row_keys(self._cand_U), return_index=True)[1]] = True
            self._available = self._cand_first.copy()
            self._cand_key_index: dict[bytes, int] | None = None

    def _candidate_params(self, i: int) -> dict:
        if self._cand_rows is None:
            return self.space.from_unit(self._cand_U[i])[0]
        row = self._cand_rows[i]
        return {n: d.validate(n, v.item() if isinstance(v, np.generic) else v)
                for (n, d), v in zip(self.space.dimensions.items(), row)}

    def _candidate_of(self, unit: np.ndarray) -> int | None:
        if self._cand_U is None:
            return None
        if self._cand_key_index is None:
            self._cand_key_index = {}
            for i, k in enumerate(row_keys(self._cand_U)):
                self._cand_key_index.setdefault(k, i)
        return self._cand_key_index.get(row_keys(unit[None, :])[0])

    # -- journal replay -----------------------------------------------------------------------
    def _sync(self) -> None:
        for eid, kind, p in self.storage.read(self.study_name, self._last_event):
            try:
                self._apply(kind, p)
            except (ValueError, TypeError, KeyError, IndexError) as exc:
                raise ValueError(f"study {self.study_name!r}: journal event {eid} ({kind!r}) is "
                                 f"invalid: {exc}") from None
            self._last_event = eid

    def _trial_of(self, p: Mapping, pending: bool) -> Trial:
        i = p["id"]
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self.trials):
            raise ValueError(f"no trial with id {i!r}")
        t = self.trials[i]
        if pending and t.state != "pending":
            raise ValueError(f"trial {i} was already told ({t.state})")
        return t

    def _checked_ask(self, p: Mapping) -> Trial:
        """The trial an ``ask`` event records, checked against the space and the study."""
        i = p["id"]
        if not isinstance(i, int) or isinstance(i, bool) or i != len(self.trials):
            raise ValueError(f"trial id {i!r} out of order (expected {len(self.trials)})")
        params = self.space.validate(p["params"])
        unit = np.asarray(p["unit"], dtype=float)
        if unit.shape != (len(self.space),) or not np.all((unit >= 0) & (unit <= 1)):
            raise ValueError(f"unit point {p['unit']!r} is not a point of the unit cube with "
                             f"{len(self.space)} coordinates")
        # the point of record is the encoding of the params (up to rounding)
        if np.abs(self.space.to_unit([params])[0] - unit).max() > 1e-9:
            raise ValueError(f"unit point {p['unit']!r} does not encode params {params!r}")
        cand = p.get("candidate")
        if cand is not None and (self._cand_U is None or not isinstance(cand, int)
                                 or isinstance(cand, bool)
                                 or not 0 <= cand < self._cand_U.shape[0]
                                 or not np.array_equal(self._cand_U[cand], unit)):
            raise ValueError(f"candidate {cand!r} is not the candidate row of this point")
        if p["owner"] is not None and not isinstance(p["owner"], str):
            raise TypeError(f"owner must be a string, got {p['owner']!r}")
        return Trial(id=p["id"], params=params, asked_at=_finite(p["time"], "time"),
                     owner=p["owner"], candidate=cand, unit=unit)

    @staticmethod
    def _checked_tell(p: Mapping) -> dict:
        """The fields a ``tell`` event sets, checked."""
        state, value, extra, error = p["state"], p["value"], p["extra"], p["error"]
        if state == "complete":
            _finite(value, "value")
        elif state == "failed":
            if value is not None:
                raise ValueError(f"a failed trial has no value, got {value!r}")
        else:
            raise ValueError(f"state must be 'complete' or 'failed', got {state!r}")
        if not isinstance(extra, dict):
            raise TypeError(f"extra must be a dict, got {extra!r}")
        if error is not None and not isinstance(error, str):
            raise TypeError(f"error must be a string, got {error!r}")
        times = {k: p.get(k) for k in ("start", "end")}
        for k, v in times.items():
            if v is not None:
                _finite(v, k)
        worker = p.get("worker")
        if worker is not None and not isinstance(worker, str):
            raise TypeError(f"worker must be a string, got {worker!r}")
        return {"state": state, "value": None if value is None else float(value),
                "extra": extra, "error": error, "worker": worker, **times}

    def _apply(self, kind: str, p: dict) -> None:
        if not isinstance(p, Mapping):
            raise TypeError(f"payload must be a JSON object, got {p!r}")
        if kind == "ask":
            t = self._checked_ask(p)
            unit = t.unit
            self.trials.append(t)
            self._asked.append(unit)
            self._asked_keys.add(row_keys(unit[None, :])[0])
            self._pending[t.id] = None
            if t.candidate is not None and self._cand_U is not None:
                self._available[t.candidate] = False
            self._seen_keys.add(self._params_key(t.params))
        elif kind == "claim":
            t = self._trial_of(p, pending=True)
            if not isinstance(p["owner"], str):
                raise TypeError(f"owner must be a string, got {p['owner']!r}")
            t.owner = p["owner"]
        elif kind == "tell":
            t = self._trial_of(p, pending=True)
            f = self._checked_tell(p)
            t.state, t.value, t.extra, t.error = f["state"], f["value"], f["extra"], f["error"]
            t.start, t.end, t.worker = f["start"], f["end"], f["worker"]
            self._pending.pop(t.id, None)
            self._n_finished += 1
            if t.state == "complete":
                if self._best is None or (t.value, t.id) < (self._best.value, self._best.id):
                    self._best = t
                self._obs.append(t.unit, float(t.value))
            elif self.on_failure == "worst" and self._obs.n:
                self._obs.append(t.unit, float(self._obs.y.max()))
        else:
            raise ValueError(f"unknown kind of event {kind!r}")

    def _feed_model(self) -> None:
        n = self._obs.n
        if n > self._fed:
            self.model.observe(self._obs.X, self._obs.y, n - self._fed)
            self._fed = n

    @staticmethod
    def _params_key(params: dict) -> bytes:
        return json.dumps(params, sort_keys=True, default=str).encode()

    # -- public state -------------------------------------------------------------------------
    @property
    def n_trials(self) -> int:
        return len(self.trials)

    @property
    def n_finished(self) -> int:
        return self._n_finished

    def _pending_trials(self) -> list[Trial]:
        return [self.trials[i] for i in self._pending]

    @property
    def pending(self) -> list[Trial]:
        """Copies of the trials asked and not yet told, in the order they were asked."""
        return [_public(t) for t in self._pending_trials()]

    @property
    def best_trial(self) -> Trial | None:
        """A copy of the complete trial with the smallest loss (the first of ties)."""
        return None if self._best is None else _public(self._best)

    def refresh(self) -> None:
        """Read what other processes appended to the journal."""
        self._sync()
        self._feed_model()

    # -- ask ----------------------------------------------------------------------------------
    def ask(self, n: int | None = None, max_trials: int | None = None):
        """Propose one trial (``n=None``) or a list of ``n`` trials for parallel workers.

        Pending trials (asked, not yet told, by this or another process) are accounted for by
        ``batch_strategy``.  With ``max_trials`` no trial is created once the study holds that
        many (finished or pending); fewer, possibly none, are returned.
        Raises :class:`StudyExhausted` when a finite candidate set is used up.
        """
        single = n is None
        if not single and (not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 1):
            raise ValueError(f"n must be a positive integer or None, got {n!r}.")
        if max_trials is not None and (not isinstance(max_trials, numbers.Integral)
                                       or isinstance(max_trials, bool) or max_trials < 0):
            raise ValueError(f"max_trials must be a non-negative integer or None, got "
                             f"{max_trials!r}.")
        out: list[Trial] = []
        self._appended = False
        try:
            with self.storage.transaction():
                self._sync()
                self._feed_model()
                count = 1 if single else int(n)
                if max_trials is not None:
                    count = min(count, max(0, int(max_trials) - len(self.trials)))
                out.extend(self._reclaim(count))
                lied = None
                while len(out) < count:
                    trial, lied = self._propose(lied)
                    if trial is None:
                        break
                    out.append(trial)
        except BaseException:
            if self._appended:
                self._rebuild()  # the storage dropped this ask's events: so does the study
            raise
        out = [_public(t) for t in out]
        if single:
            if not out:
                if max_trials is not None and len(self.trials) >= max_trials:
                    return None
                raise StudyExhausted("every candidate has been evaluated or is pending.")
            return out[0]
        if not out and max_trials is None:
            raise StudyExhausted("every candidate has been evaluated or is pending.")
        return out

    def _reclaim(self, count: int) -> list[Trial]:
        out = []
        for i in list(self._pending):
            t = self.trials[i]
            if len(out) == count:
                break
            if not _owner_alive(t.owner):
                self._append("claim", {"id": t.id, "owner": self.owner})
                self._sync()
                out.append(t)
        return out

    def _rng(self, number: int) -> np.random.Generator:
        return np.random.default_rng([*np.atleast_1d(self._entropy).tolist(), number])

    def _propose(self, lied: Model | None) -> tuple[Trial | None, Model | None]:
        number = len(self.trials)
        rng = self._rng(number)
        if self._cand_U is not None and not self._available.any():
            return None, lied
        unit, cand = None, None
        if number < self.n_initial:
            unit, cand = self._initial_point(number, rng)
        elif not self.model.ready or rng.random() < self.model.random_interleave:
            unit, cand = self._random_point(rng)
        else:
            unit, cand, lied = self._acquire(rng, lied)
        if unit is None:
            return None, lied
        params = self._candidate_params(cand) if cand is not None else \
            self.space.from_unit(unit)[0]
        # the unit point of record is that of the params (rounded / snapped)
        unit = self._cand_U[cand] if cand is not None else self.space.to_unit([params])[0]
        payload = {"id": number, "params": params, "unit": unit.tolist(), "candidate": cand,
                   "owner": self.owner, "time": time.time()}
        self._append("ask", payload)
        self._sync()
        return self.trials[number], lied

    def _initial_point(self, number, rng):
        if self._init_U is None:
            init_rng = np.random.default_rng([*np.atleast_1d(self._entropy).tolist(), 2**32 - 1])
            self._init_U = self.space.sample(self.n_initial, init_rng, self.initial_design)
        target = self._init_U[number]
        if self._cand_U is not None:
            idx = np.flatnonzero(self._available)
            d = ((self._cand_U[idx] - target) ** 2).sum(axis=1)
            return self._cand_U[idx[np.argmin(d)]], int(idx[np.argmin(d)])
        if self._params_key(self.space.from_unit(target)[0]) in self._seen_keys:
            return self._random_point(rng)
        return target, None

    def _random_point(self, rng):
        if self._cand_U is not None:
            idx = np.flatnonzero(self._available)
            i = int(idx[rng.integers(idx.size)])
            return self._cand_U[i], i
        known = self._asked.X
        for _ in range(1000):
            u = snap(rng.random(len(self.space)), self.space.levels)
            if self._is_new(u, known):
                return u, None
        return None, None

    def _is_new(self, u: np.ndarray, known: np.ndarray) -> bool:
        """Whether ``u`` is neither an asked configuration nor within ``min_distance`` of an
        asked point (``known``: their unit-cube rows)."""
        if self.min_distance > 0 and len(known) and \
                np.abs(known - u).max(axis=1).min() < self.min_distance:
            return False
        return self._params_key(self.space.from_unit(u)[0]) not in self._seen_keys

    def _score_fn(self, model: Model, rng):
        acq = self.acquisition
        thompson = acq.thompson or self.batch_strategy == "thompson" and bool(self._pending)
        if thompson:
            mean_t, _ = model.predict_per_tree(np.zeros((1, len(self.space))))
            tree = int(rng.integers(mean_t.shape[1]))

            def score(U):
                return -model.predict_per_tree(U)[0][:, tree]
            return score
        best = model.incumbent(self._obs.y) if acq.needs_best else None

        def score(U):
            m, s = model.predict(U)
            return acq(m, s, best)
        return score

    def _acquire(self, rng, lied):
        model = self.model
        pending = self._pending_trials()
        if pending and self.batch_strategy == "constant_liar":
            X, y = self._obs.X, self._obs.y
            lie = {"min": y.min(), "mean": y.mean(), "max": y.max()}[self.liar]
            if lied is not None and lied._lies == len(pending) - 1:
                lied.add_lies(pending[-1].unit, lie)  # the trial proposed just before
            elif lied is None or lied._lies != len(pending):
                lied = model.with_lies(X, y, np.array([t.unit for t in pending]), lie)
            lied._lies = len(pending)
            model = lied
        score = self._score_fn(model, rng)
        # asked points (evaluated and pending): never proposed again, and ties of the
        # acquisition are broken away from them
        known = self._asked.X
        if self._cand_U is not None:
            idx = maximize_over_candidates(score, self._cand_U, self._available, 1, rng,
                                           far_from=known)
            if idx.size == 0:
                return None, None, lied
            i = int(idx[0])
            return self._cand_U[i], i, lied
        starts = None
        if self.local_search:
            y = self._obs.y
            best = np.argpartition(y, 10)[:10] if y.size > 10 else np.arange(y.size)
            starts = self._obs.X[best[np.argsort(y[best], kind="stable")]]
        pts = maximize_random_local(
            score, self.space.levels, n=10, rng=rng,
            n_random=self.n_random_candidates, starts=starts,
            n_local=10 if self.local_search else 0,
            **{**self.model.local_search_options, **self._local_search_options,
               **({} if self.local_search else {"patience": 0})},
            exclude=self._asked_keys,
            far_from=known, neighbourhood=self._neighbourhood or self.model.neighbourhood)
        for u in pts:
            if self._is_new(u, known):
                return u, None, lied
        unit, cand = self._random_point(rng)
        return unit, cand, lied

    # -- tell ---------------------------------------------------------------------------------
    def tell(self, trial, value=None, *, error: str | None = None, start: float | None = None,
             end: float | None = None, worker: str | None = None) -> Trial:
        """Report the outcome of a trial.

        ``trial`` is a :class:`Trial` or its id (from :meth:`ask`), or a parameter dict for a
        configuration evaluated outside the optimizer (it is recorded as a new trial).
        ``value`` is the loss: a float, or a dict with a ``"loss"`` key and extra fields.  An
        exception, ``None``, NaN or inf (or ``error=...``) records a failed trial.
        Bad input raises before anything is recorded.
        """
        state, loss, extra, err = parse_outcome(value)
        if error is not None:
            state, loss, err = "failed", None, str(error)
        for name, v in (("start", start), ("end", end)):
            if v is not None:
                _finite(v, f"{name} (a time stamp)")
        if worker is not None and not isinstance(worker, str):
            raise TypeError(f"worker must be a string, got {worker!r}.")
        self._appended = False
        try:
            return self._tell(trial, state, loss, extra, err, start, end, worker)
        except BaseException:
            if self._appended:
                self._rebuild()  # the storage dropped this tell's events: so does the study
            raise

    def _tell(self, trial, state, loss, extra, err, start, end, worker) -> Trial:
        with self.storage.transaction():
            self._sync()
            if isinstance(trial, Mapping):
                params = self.space.validate(trial)
                unit = self.space.to_unit([params])[0]
                cand = self._candidate_of(unit)
                number = len(self.trials)
                self._append("ask", {
                    "id": number, "params": params, "unit": unit.tolist(), "candidate": cand,
                    "owner": self.owner, "time": time.time()})
                self._sync()
            else:
                number = trial.id if isinstance(trial, Trial) else trial
                if not isinstance(number, numbers.Integral) or isinstance(number, bool):
                    raise TypeError(f"trial must be a Trial, a trial id or a params dict, got "
                                    f"{trial!r}.")
                if not 0 <= number < len(self.trials):
                    raise ValueError(f"unknown trial id {number}; this study has "
                                     f"{len(self.trials)} trials.")
                if self.trials[number].state != "pending":
                    raise ValueError(f"trial {number} was already told "
                                     f"({self.trials[number].state}).")
                if isinstance(trial, Trial) and trial.params != self.trials[number].params:
                    raise ValueError(f"trial {number}'s params differ from those it was asked "
                                     f"with.")
            now = time.time()
            self._append("tell", {
                "id": int(number), "state": state, "value": loss, "extra": extra, "error": err,
                "start": start, "end": end if end is not None else now, "worker": worker})
            self._sync()
        self._feed_model()
        return _public(self.trials[number])

    # -- results ------------------------------------------------------------------------------
    def result(self):
        """A :class:`~mfbo.results.OptimizeResult` of the trials so far."""
        from .results import OptimizeResult

        self._sync()
        return OptimizeResult(self.space, [_public(t) for t in self.trials])

    def close(self) -> None:
        _LIVE_OWNERS.discard(self.owner)
