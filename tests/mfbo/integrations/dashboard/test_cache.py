"""What the dashboard keeps between requests: the same answers as optuna-dashboard's own, byte
for byte, while serialising each settled trial once and summarising only new trials."""

import sys
from io import BytesIO
from wsgiref.util import setup_testing_defaults

import pytest

pytest.importorskip("optuna_dashboard",
                    reason='the dashboard needs optuna-dashboard (pip install "mfbo[dashboard]")')

import optuna_dashboard  # noqa: E402

from mfbo import Optimizer  # noqa: E402
from mfbo.integrations.dashboard.app import create_app, open_view  # noqa: E402
from mfbo.integrations.dashboard.cache import (  # noqa: E402
    DETAIL_RULE, serve_settled_trials_once, summarise_new_trials_only)
from tests.support import SPACE, quad, run_trials  # noqa: E402


def call(app, path, query=""):
    """``(status, body)`` of a GET of ``path?query`` from the WSGI ``app``."""
    environ = {"PATH_INFO": path, "QUERY_STRING": query, "wsgi.input": BytesIO(),
               "wsgi.errors": sys.stderr}
    setup_testing_defaults(environ)
    said = []
    body = b"".join(app(environ, lambda status, headers, exc_info=None: said.append(status)))
    return said[0], body


QUERIES = ["", "after=0", "after=2", "after=5", "after=11", "after=40", "after=-1", "after=x"]


def _same(ours, theirs, study=0):
    """Assert that ``ours`` answers each of :data:`QUERIES` as ``theirs``; the whole study."""
    for query in QUERIES:
        mine = call(ours, f"/api/studies/{study}", query)
        assert mine == call(theirs, f"/api/studies/{study}", query), query
    return call(ours, f"/api/studies/{study}")


def test_answers_are_optuna_dashboards_own_as_trials_settle(tmp_path):
    db = str(tmp_path / "s.db")
    opt = run_trials(Optimizer(SPACE, storage=db, random_state=0), quad, 6)
    pending = opt.ask()  # trial 6: running while the next ones finish
    failed = opt.ask()
    opt.tell(failed, state="failed", error="diverged")
    run_trials(opt, quad, 3)
    view = open_view(db, refresh_interval=0)
    ours, theirs = create_app(view), optuna_dashboard.wsgi(view)
    for _ in range(2):  # the second time from what was kept
        _same(ours, theirs)
    opt.tell(pending, quad(**pending.params))
    run_trials(opt, quad, 2)
    theirs._inmemory_cache.clear()  # it would keep the trials it read for 2 s
    status, body = _same(ours, theirs)
    assert status == "200 OK" and b'"Running"' not in body
    assert call(ours, "/api/studies/3")[0] == call(theirs, "/api/studies/3")[0] == "404 Not Found"
    kept = ours._inmemory_cache._cached_extra_study_property_cache.get(0)
    assert kept.seen == 13  # every trial finished: the next summary reads only new ones
    opt.close()


def test_the_summary_reads_only_the_trials_it_has_not_seen_finished(tmp_path):
    db = str(tmp_path / "s.db")
    opt = run_trials(Optimizer(SPACE, storage=db, random_state=0), quad, 5)
    running = opt.ask()
    run_trials(opt, quad, 2)
    view = open_view(db, refresh_interval=0)
    app = create_app(view)
    call(app, "/api/studies/0")
    summary = app._inmemory_cache._cached_extra_study_property_cache.get(0)
    assert summary.seen == running.id == 5
    read = []
    original = type(summary).__mro__[1].update
    type(summary).__mro__[1].update = lambda self, trials: (read.append(len(trials)),
                                                             original(self, trials))
    try:
        call(app, "/api/studies/0", "after=8")
        opt.tell(running, 1.0)
        call(app, "/api/studies/0", "after=8")
        call(app, "/api/studies/0", "after=8")
    finally:
        type(summary).__mro__[1].update = original
    assert read == [3, 3, 0] and summary.seen == 8
    opt.close()


def test_an_app_without_the_route_or_the_cache_is_left_as_it_is():
    bottle = pytest.importorskip("bottle")
    app = bottle.Bottle()
    assert not serve_settled_trials_once(app, view=None)
    assert not summarise_new_trials_only(app)
    assert DETAIL_RULE == "/api/studies/<study_id:int>"
