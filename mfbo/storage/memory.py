"""A study journal that lives as long as the process."""

from __future__ import annotations

import contextlib
import json
import threading

from .base import Storage, check_same_space, to_json

__all__ = ["InMemoryStorage"]


class InMemoryStorage(Storage):
    """A journal that lives as long as the process (the default).  Its owners all live in this
    process, so it needs no heartbeats: an optimizer is alive until it is closed."""

    def __init__(self):
        self._studies: dict[str, tuple[dict, dict]] = {}
        self._events: dict[str, list[tuple[str, dict]]] = {}  # study -> (kind, payload)
        self._lock = threading.RLock()
        self._depth = 0

    def __getstate__(self):
        """The journals as they stand (their lists copied under the lock: events are only
        appended or, by a rolled-back transaction, cut off the end, never edited); no lock, no
        open transaction travels with a pickle."""
        with self._lock:
            return {"_studies": dict(self._studies),
                    "_events": {name: list(events) for name, events in self._events.items()}}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._depth = 0

    def open_study(self, name, space, config):
        with self._lock:
            if name in self._studies:
                stored_space, stored_config = self._studies[name]
                check_same_space(name, stored_space, space)
                return stored_config
            self._studies[name] = (json.loads(to_json(space)), json.loads(to_json(config)))
            return self._studies[name][1]

    @contextlib.contextmanager
    def transaction(self, study=None):
        """As SQLite's: the events appended inside are dropped again if it raises."""
        with self._lock:
            lengths = {name: len(events) for name, events in self._events.items()}
            self._depth += 1
            try:
                yield
            except BaseException:
                if self._depth == 1:
                    for name, events in self._events.items():
                        del events[lengths.get(name, 0):]
                raise
            finally:
                self._depth -= 1

    def append(self, study, kind, payload):
        with self._lock:
            events = self._events.setdefault(study, [])
            events.append((kind, json.loads(to_json(payload))))
            return len(events)

    def read(self, study, after, limit=None):
        with self._lock:
            events = self._events.get(study, [])
            end = None if limit is None else after + int(limit)
            return [(i + 1, k, p) for i, (k, p) in enumerate(events[after:end], start=after)]

    def studies(self):
        with self._lock:
            return list(self._studies)

    def stored_study(self, name):
        with self._lock:
            record = self._studies.get(name)
            return None if record is None else json.loads(to_json(record))
