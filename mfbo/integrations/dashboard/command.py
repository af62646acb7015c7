"""The ``mfbo dashboard`` command: watch the studies of a storage live in a browser.

``mfbo dashboard STORAGE [--study NAME] [--host HOST] [--port PORT]``

``STORAGE`` is an SQLite study file (a path or ``sqlite:///path``) or a PostgreSQL URL, opened
read-only while workers write to it.  The command serves optuna-dashboard over a read-only view
of the journal (:mod:`.view`) at ``http://HOST:PORT/dashboard`` and mfbo's forest figures at
``http://HOST:PORT/mfbo`` (:mod:`.app`) until interrupted.  It needs optuna-dashboard
(``pip install "mfbo[dashboard]"``); without it, or with a missing file or study, it prints one
line on stderr and exits with code 2.
"""

from __future__ import annotations

import argparse
import sys
import threading

from ...cli.study import CommandError

__all__ = ["register", "serve"]


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"--port must be an integer from 0 to 65535, got "
                                         f"{text!r}")
    return port


def register(subparsers) -> None:
    """Add ``dashboard`` to the ``mfbo`` command's subparsers."""
    p = subparsers.add_parser(
        "dashboard", help="watch the studies of a storage live in a browser (read-only)",
        description="Serve optuna-dashboard over a read-only view of an mfbo study file or "
                    "PostgreSQL database, with mfbo's forest figures at /mfbo.")
    p.add_argument("storage", metavar="STORAGE",
                   help="an SQLite study file (path or sqlite:///path) or a PostgreSQL URL")
    p.add_argument("--study", default=None, metavar="NAME",
                   help="show only this study (default: every study of the storage)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: "
                   "127.0.0.1; 0.0.0.0 to be reached from other machines)")
    p.add_argument("--port", type=_port, default=8080, help="port (default: 8080)")
    p.set_defaults(handler=_handle)


def serve(storage: str, study: str | None = None, host: str = "127.0.0.1",
          port: int = 8080) -> None:
    """Serve the dashboard of ``storage`` (see the module) until interrupted."""
    from wsgiref.simple_server import WSGIServer, make_server
    from socketserver import ThreadingMixIn

    from . import create_app, open_view

    view = open_view(storage, study)
    app = create_app(view)
    # the first read of a study replays its whole journal: done now, not by the first page
    threading.Thread(target=_read_all, args=(view,), daemon=True).start()

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    with make_server(host, port, app, server_class=Server) as server:
        url = f"http://{host}:{server.server_port}"
        print(f"mfbo dashboard of {storage}: {url}/dashboard (mfbo's figures: {url}/mfbo); "
              f"read-only; Ctrl-C stops it", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def _read_all(view) -> None:
    """Read every study of ``view`` once."""
    for study_id in range(len(view.get_all_studies())):
        view.get_all_trials(study_id, deepcopy=False)


def _handle(args) -> int:
    try:
        serve(args.storage, args.study, args.host, args.port)
    except (CommandError, ImportError, OSError) as exc:
        print(f"mfbo dashboard: error: {exc}", file=sys.stderr)
        return 2
    return 0
