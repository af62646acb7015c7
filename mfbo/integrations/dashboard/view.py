"""A read-only Optuna storage over an mfbo journal, so that Optuna's tools (optuna-dashboard,
``optuna.load_study``, Optuna's figures) show mfbo studies as they run.

:class:`JournalView` implements Optuna's :class:`~optuna.storages.BaseStorage`.  Every study of
the mfbo storage is an Optuna study (numbered in the order the studies were created); every
trial is a ``FrozenTrial`` (:mod:`.frozen`) whose Optuna trial id joins the study's number and
the trial's.  The journal is read incrementally: each study is an mfbo :class:`~mfbo.Study`
replaying only the events appended since its last read, at most once every
``refresh_interval`` seconds, and only the trials those events touched (new ones, and those
that were pending) are converted again.  Every method that would write raises
:class:`ReadOnlyStorageError`; the mfbo storage itself is opened read-only.
"""

from __future__ import annotations

import copy
import threading
import time

from optuna.storages import BaseStorage
from optuna.trial import TrialState

from ...storage import Storage
from ...study.study import Study
from .frozen import distributions_of, frozen_study, frozen_trial

__all__ = ["JournalView", "ReadOnlyStorageError", "TRIAL_ID_BASE"]

#: an Optuna trial id is ``study number * TRIAL_ID_BASE + mfbo trial id`` (unique across
#: studies, as Optuna's are, and below 2**53 so a browser keeps it exact)
TRIAL_ID_BASE = 2 ** 32


class ReadOnlyStorageError(PermissionError):
    """A write through :class:`JournalView`, which only reads an mfbo journal."""


class _Live:
    """One study of the view: its replayed mfbo study, and its trials in Optuna form."""

    def __init__(self, study: Study, number: int):
        self.study = study
        self.number = number
        self.distributions = distributions_of(study.space)
        self.frozen: list = []
        self.unsettled: list[int] = []  # trial ids whose Optuna form may still change
        self.read_at = float("-inf")

    def update(self) -> None:
        """Replay what the journal gained and convert the trials it touched."""
        self.study.refresh()
        trials = self.study.trials
        touched = self.unsettled + list(range(len(self.frozen), len(trials)))
        self.frozen.extend([None] * (len(trials) - len(self.frozen)))
        base = self.number * TRIAL_ID_BASE
        for i in touched:
            self.frozen[i] = frozen_trial(trials[i], self.distributions, base + i)
        self.unsettled = [i for i in touched if trials[i].state == "pending"]
        self.read_at = time.monotonic()


class JournalView(BaseStorage):
    """Optuna's storage interface over the mfbo storage ``storage`` (a :class:`mfbo.Storage`
    opened read-only, e.g. by ``mfbo.storage.as_storage(path, create=False,
    read_only=True)``), for reading only.

    ``refresh_interval`` (seconds, default 0.5): a study is read from the journal again only
    once this long has passed since its last read, so the many requests of one page refresh
    cost one read.  ``study_name``: show only that study (None: every study of the storage).
    """

    def __init__(self, storage: Storage, refresh_interval: float = 0.5,
                 study_name: str | None = None):
        if not isinstance(storage, Storage):
            raise TypeError(f"storage must be an mfbo Storage, got {type(storage).__name__}.")
        if isinstance(refresh_interval, bool) or not isinstance(refresh_interval, (int, float)) \
                or not 0 <= refresh_interval < float("inf"):
            raise ValueError(f"refresh_interval must be a non-negative number of seconds, got "
                             f"{refresh_interval!r}.")
        if study_name is not None and study_name not in storage.studies():
            raise ValueError(f"study_name: no study named {study_name!r} in this storage; it "
                             f"holds {storage.studies() or 'no study'}.")
        self.storage = storage
        self.refresh_interval = float(refresh_interval)
        self.study_name = study_name
        self._lock = threading.RLock()
        self._names: list[str] = []
        self._names_at = float("-inf")
        self._configs: dict[str, dict] = {}
        self._live: dict[str, _Live] = {}

    # -- studies -------------------------------------------------------------------------------
    def _study_names(self, now: bool = False) -> list[str]:
        """The names shown, read again when ``refresh_interval`` has passed (``now``: at
        once, for a study created since)."""
        with self._lock:
            if now or time.monotonic() - self._names_at >= self.refresh_interval:
                names = self.storage.studies()
                self._names = [n for n in names if self.study_name in (None, n)]
                self._names_at = time.monotonic()
            return self._names

    def _name(self, study_id: int) -> str:
        names = self._study_names()
        ok = isinstance(study_id, int) and not isinstance(study_id, bool)
        if ok and study_id >= len(names):
            names = self._study_names(now=True)
        if ok and 0 <= study_id < len(names):
            return names[study_id]
        raise KeyError(f"no study with id {study_id!r}; this storage holds {len(names)}.")

    def _config(self, name: str) -> dict:
        with self._lock:
            if name not in self._configs:
                self._configs[name] = self.storage.stored_study(name)[1]
            return self._configs[name]

    def _live_study(self, study_id: int) -> _Live:
        """The study ``study_id``, read again when ``refresh_interval`` has passed."""
        name = self._name(study_id)
        with self._lock:
            live = self._live.get(name)
            if live is None:
                live = self._live[name] = _Live(Study.open(self.storage, name), study_id)
            if time.monotonic() - live.read_at >= self.refresh_interval:
                live.update()
            return live

    def mfbo_study(self, study_id: int) -> Study:
        """The mfbo :class:`~mfbo.Study` behind Optuna study ``study_id``, as last read (the
        view's own object: read it under :attr:`lock`)."""
        return self._live_study(study_id).study

    @property
    def lock(self) -> threading.RLock:
        """Held while the view reads the journal."""
        return self._lock

    def get_all_studies(self) -> list:
        return [frozen_study(n, i, self._config(n)) for i, n in enumerate(self._study_names())]

    def get_study_id_from_name(self, study_name: str) -> int:
        for now in (False, True):
            names = self._study_names(now)
            if study_name in names:
                return names.index(study_name)
        raise KeyError(f"no study named {study_name!r}.")

    def get_study_name_from_id(self, study_id: int) -> str:
        return self._name(study_id)

    def get_study_directions(self, study_id: int) -> list:
        return list(frozen_study(self._name(study_id), study_id,
                                 self._config(self._name(study_id))).directions)

    def get_study_user_attrs(self, study_id: int) -> dict:
        name = self._name(study_id)
        return dict(frozen_study(name, study_id, self._config(name)).user_attrs)

    def get_study_system_attrs(self, study_id: int) -> dict:
        name = self._name(study_id)
        return dict(frozen_study(name, study_id, self._config(name)).system_attrs)

    # -- trials --------------------------------------------------------------------------------
    def _split(self, trial_id: int) -> tuple[_Live, int]:
        if not isinstance(trial_id, int) or trial_id < 0:
            raise KeyError(f"no trial with id {trial_id!r}.")
        study_id, number = divmod(trial_id, TRIAL_ID_BASE)
        live = self._live_study(study_id)
        if number >= len(live.frozen):
            raise KeyError(f"no trial with id {trial_id}.")
        return live, number

    def get_trial(self, trial_id: int):
        live, number = self._split(trial_id)
        return copy.deepcopy(live.frozen[number])

    def get_trial_id_from_study_id_trial_number(self, study_id: int, trial_number: int) -> int:
        live = self._live_study(study_id)
        if not isinstance(trial_number, int) or not 0 <= trial_number < len(live.frozen):
            raise KeyError(f"no trial number {trial_number!r} in study {study_id}.")
        return live.frozen[trial_number]._trial_id

    def get_all_trials(self, study_id: int, deepcopy: bool = True, states=None) -> list:
        with self._lock:
            trials = list(self._live_study(study_id).frozen)
        if states is not None:
            trials = [t for t in trials if t.state in states]
        return copy.deepcopy(trials) if deepcopy else trials

    def get_best_trial(self, study_id: int):
        with self._lock:
            live = self._live_study(study_id)
            best = getattr(live.study, "best", None)
            if len(self.get_study_directions(study_id)) == 1 and best is not None:
                return copy.deepcopy(live.frozen[best.id])
        return super().get_best_trial(study_id)

    def check_trial_is_updatable(self, trial_id: int, trial_state: TrialState) -> None:
        self._refuse("update trials")

    # -- writes: all refused -------------------------------------------------------------------
    @staticmethod
    def _refuse(what: str):
        raise ReadOnlyStorageError(f"cannot {what}: this is a read-only view of an mfbo "
                                   f"journal; change mfbo studies with mfbo itself.")

    def create_new_study(self, directions, study_name=None):
        self._refuse("create a study")

    def delete_study(self, study_id):
        self._refuse("delete a study")

    def set_study_user_attr(self, study_id, key, value):
        self._refuse("set a study's user attribute")

    def set_study_system_attr(self, study_id, key, value):
        self._refuse("set a study's system attribute (notes, preferences, artifacts)")

    def create_new_trial(self, study_id, template_trial=None):
        self._refuse("create a trial")

    def set_trial_param(self, trial_id, param_name, param_value_internal, distribution):
        self._refuse("set a trial's parameter")

    def set_trial_state_values(self, trial_id, state, values=None):
        self._refuse("tell a trial")

    def set_trial_intermediate_value(self, trial_id, step, intermediate_value):
        self._refuse("report an intermediate value")

    def set_trial_user_attr(self, trial_id, key, value):
        self._refuse("set a trial's user attribute")

    def set_trial_system_attr(self, trial_id, key, value):
        self._refuse("set a trial's system attribute")
