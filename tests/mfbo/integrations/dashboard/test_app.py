"""The dashboard's web application over HTTP: optuna-dashboard's API on an mfbo journal,
fresh at every request, every write refused, and mfbo's page of forest figures."""

import contextlib
import json
import re
import threading
import time
import urllib.error
import urllib.request
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

pytest.importorskip("optuna_dashboard",
                    reason='the dashboard needs optuna-dashboard (pip install "mfbo[dashboard]")')

from mfbo import Optimizer  # noqa: E402
from mfbo.storage import as_storage  # noqa: E402
from mfbo.integrations.dashboard.app import create_app, open_view  # noqa: E402
from mfbo.integrations.dashboard.figures import MIN_COMPLETE  # noqa: E402
from tests.support import SPACE, quad, run_trials  # noqa: E402


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(app):
    """``app`` served on a free local port in a thread; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def get(url):
    with urllib.request.urlopen(url, timeout=60) as response:
        body = response.read()
        return json.loads(body) if "json" in response.headers["Content-Type"] else body


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "s.db")
    run_trials(Optimizer(SPACE, storage=path, random_state=0), quad, 8).close()
    return path


def test_a_new_trial_shows_at_the_next_request(db):
    app = create_app(open_view(db, refresh_interval=0))
    with serving(app) as url:
        detail = get(f"{url}/api/studies/0")
        assert len(detail["trials"]) == 8
        best = min(t["values"][0] for t in detail["trials"])
        assert detail["best_trials"][0]["values"] == [best]
        opt = Optimizer(SPACE, storage=db, random_state=1)
        run_trials(opt, lambda x, y: -1.0, 1).close()
        # optuna-dashboard alone would keep the 8 trials it fetched for 2 s more
        detail = get(f"{url}/api/studies/0")
        assert len(detail["trials"]) == 9 and detail["best_trials"][0]["values"] == [-1.0]
        assert get(f"{url}/api/studies")["study_summaries"][0]["study_name"] == "default"


def _concrete(rule: str) -> str:
    return re.sub(r"<[^>]+>", "0", rule)


def test_every_write_route_is_refused_and_the_journal_is_unchanged(db):
    app = create_app(open_view(db))
    writes = [(r.method, _concrete(r.rule)) for r in app.routes
              if r.method not in ("GET", "HEAD")]
    assert ("PUT", "/api/studies/0/note") in writes and ("DELETE", "/api/studies/0") in writes
    events = len(as_storage(db).read("default", 0))
    with serving(app) as url:
        for method, path in writes:
            request = urllib.request.Request(url + path, data=b"{}", method=method)
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=60)
            assert refused.value.code == 403, (method, path)
            assert "read-only view of an mfbo journal" in json.loads(refused.value.read())[
                "reason"]
    assert len(as_storage(db).read("default", 0)) == events


def test_mfbo_page_shows_counts_and_the_forest_figures(db):
    app = create_app(open_view(db, refresh_interval=0), figures_interval=0)
    with serving(app) as url:
        page = get(f"{url}/mfbo").decode()
        assert "<span class='n-trials'>8</span>" in page and "read-only" in page
        deadline = time.monotonic() + 120
        while "importance.png" not in page and time.monotonic() < deadline:
            time.sleep(0.5)
            page = get(f"{url}/mfbo").decode()
        assert "drawn from 8 complete trials" in page and "dependence.png" in page
        for kind in ("importance", "dependence"):
            assert get(f"{url}/mfbo/studies/0/{kind}.png").startswith(b"\x89PNG")
        for path in ("/mfbo/studies/0/other.png", "/mfbo/studies/5/importance.png"):
            with pytest.raises(urllib.error.HTTPError) as missing:
                get(url + path)
            assert missing.value.code == 404
    assert MIN_COMPLETE <= 8
