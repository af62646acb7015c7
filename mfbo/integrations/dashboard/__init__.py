"""Watch mfbo studies live in optuna-dashboard.

- :class:`JournalView`: Optuna's storage interface over an mfbo journal (SQLite or
  PostgreSQL), read incrementally and read-only (:mod:`.view`, :mod:`.frozen`);
- :func:`create_app`: optuna-dashboard over a view, with mfbo's forest figures at ``/mfbo``
  (:mod:`.app`, :mod:`.figures`);
- ``mfbo dashboard STORAGE``: the command that serves it (:mod:`.command`).

Needs optuna (``pip install "mfbo[optuna]"``) for the view and optuna-dashboard
(``pip install "mfbo[dashboard]"``) for the application.
"""

import importlib

try:
    importlib.import_module("optuna")
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('mfbo.integrations.dashboard needs optuna and optuna-dashboard; install '
                      'them with: pip install "mfbo[dashboard]"') from exc

from .app import create_app, open_view
from .view import JournalView, ReadOnlyStorageError

__all__ = ["JournalView", "ReadOnlyStorageError", "create_app", "open_view"]
