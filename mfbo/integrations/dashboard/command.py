"""The ``mfbo dashboard`` command: watch the studies of a storage live in a browser.

``mfbo dashboard STORAGE [--study NAME] [--host HOST] [--port PORT] [--reload-interval SECONDS]``

``STORAGE`` is an SQLite study file (a path or ``sqlite:///path``) or a PostgreSQL URL, opened
read-only while workers write to it.  The command serves optuna-dashboard over a read-only view
of the journal (:mod:`.view`) at ``http://HOST:PORT/dashboard`` and mfbo's forest figures at
``http://HOST:PORT/mfbo`` (:mod:`.app`) until interrupted; a study's page asks for new trials
at least every ``--reload-interval`` seconds (default 3, so that a trial told shows within 5 s
with the time the page takes to ask and draw; optuna-dashboard alone waits 10 s on a study of
500 trials or more).  It needs optuna-dashboard
(``pip install "mfbo[dashboard]"``); without it, or with a missing file or study, it prints one
line on stderr and exits with code 2.
"""

from __future__ import annotations

import argparse
import sys
import threading

from ...cli.study import CommandError
from . import RELOAD_INTERVAL

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


def _interval(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 10:
        raise argparse.ArgumentTypeError(f"--reload-interval must be a number of seconds above "
                                         f"0 and at most 10, got {text!r}")
    return seconds


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
    p.add_argument("--reload-interval", type=_interval, default=RELOAD_INTERVAL,
                   metavar="SECONDS",
                   help=f"the longest time between two polls for new trials of a study's page "
                        f"(default: {RELOAD_INTERVAL:g}; at most 10, optuna-dashboard's own on "
                        f"a study of 500 trials or more)")
    p.set_defaults(handler=_handle)


def serve(storage: str, study: str | None = None, host: str = "127.0.0.1",
          port: int = 8080, reload_interval: float = RELOAD_INTERVAL) -> None:
    """Serve the dashboard of ``storage`` (see the module) until interrupted."""
    from wsgiref.simple_server import WSGIServer, make_server
    from socketserver import ThreadingMixIn

    from . import create_app, open_view

    view = open_view(storage, study)
    app = create_app(view, reload_interval=reload_interval)
    # the first read of a study replays its whole journal and serialises every trial: done
    # now, not by the first page
    threading.Thread(target=_read_all, args=(app, view), daemon=True).start()

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


def _read_all(app, view) -> None:
    """Ask ``app`` once for every study of ``view`` with its trials, as a page would."""
    from wsgiref.util import setup_testing_defaults

    for study_id in range(len(view.get_all_studies())):
        environ = {"PATH_INFO": f"/api/studies/{study_id}"}
        setup_testing_defaults(environ)
        for _ in app(environ, lambda status, headers, exc_info=None: None):
            pass


def _handle(args) -> int:
    try:
        serve(args.storage, args.study, args.host, args.port, args.reload_interval)
    except (CommandError, ImportError, OSError) as exc:
        print(f"mfbo dashboard: error: {exc}", file=sys.stderr)
        return 2
    return 0
