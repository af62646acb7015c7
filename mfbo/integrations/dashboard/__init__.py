"""Watch mfbo studies live in optuna-dashboard.

- :class:`JournalView`: Optuna's storage interface over an mfbo journal (SQLite or
  PostgreSQL), read incrementally and read-only (:mod:`.view`, :mod:`.frozen`);
- :func:`create_app`: optuna-dashboard over a view, with mfbo's forest figures at ``/mfbo``
  (:mod:`.app`, :mod:`.figures`), its study pages polling every :data:`RELOAD_INTERVAL`
  seconds at most (:mod:`.bundle`) and a page load serialising only the trials that changed
  (:mod:`.cache`);
- ``mfbo dashboard STORAGE``: the command that serves it (:mod:`.command`).

Needs optuna and optuna-dashboard (``pip install "mfbo[dashboard]"``).  Importing this package
imports neither: the ``mfbo`` command loads :mod:`.command` to list its subcommands, and only
the names below, when first used, import them.
"""

import importlib

__all__ = ["JournalView", "ReadOnlyStorageError", "create_app", "open_view", "EXTRA_MESSAGE",
           "RELOAD_INTERVAL"]

EXTRA_MESSAGE = ('mfbo dashboard needs optuna and optuna-dashboard; install them with: '
                 'pip install "mfbo[dashboard]"')

#: the longest time, in seconds, between two polls of optuna-dashboard's study page by default
#: (optuna-dashboard's own: 10 s on a study of 500 trials or more); 3 s, so that a trial told
#: shows within 5 s with the time the page takes to ask and draw
RELOAD_INTERVAL = 3.0

_WHERE = {"JournalView": "view", "ReadOnlyStorageError": "view", "create_app": "app",
          "open_view": "app"}


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f".{_WHERE[name]}", __name__)
    except ImportError as exc:
        if exc.name not in ("optuna", "optuna_dashboard", "bottle"):
            raise
        raise ImportError(EXTRA_MESSAGE) from exc
    return getattr(module, name)
