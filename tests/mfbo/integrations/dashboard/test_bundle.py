"""optuna-dashboard's page made to poll at least every few seconds: one narrow substitution in
its script, served in place of the original, and the original with a warning when the polling
code is not found."""

import gzip
import importlib.metadata
import sys
from io import BytesIO
from pathlib import Path
from wsgiref.util import setup_testing_defaults

import pytest

pytest.importorskip("optuna_dashboard",
                    reason='the dashboard needs optuna-dashboard (pip install "mfbo[dashboard]")')

import optuna_dashboard  # noqa: E402

from mfbo import Optimizer  # noqa: E402
from mfbo.integrations.dashboard.app import create_app, open_view  # noqa: E402
from mfbo.integrations.dashboard import bundle  # noqa: E402
from mfbo.integrations.dashboard.bundle import (  # noqa: E402
    BUNDLE_PATH, POLLING, patched_bundle)

ORIGINAL = (Path(optuna_dashboard.__file__).parent / "public" / "bundle.js").read_text("utf-8")
VERSION = importlib.metadata.version("optuna-dashboard")


def get(app, path, **headers):
    """``(status, headers, body)`` of a GET of ``path`` from the WSGI ``app``."""
    environ = {"PATH_INFO": path, "wsgi.input": BytesIO(), "wsgi.errors": sys.stderr,
               **{"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}}
    setup_testing_defaults(environ)
    said = []
    body = b"".join(app(environ, lambda status, hs, exc_info=None: said.append((status, hs))))
    return said[0][0], dict(said[0][1]), body


def test_the_installed_bundle_has_its_polling_code_once_and_it_is_changed_there_only():
    assert len(POLLING.findall(ORIGINAL)) == 1
    patched = patched_bundle(3)
    assert not POLLING.findall(patched)
    before, _, after = ORIGINAL.partition(POLLING.search(ORIGINAL).group(0))
    assert patched.startswith(before) and patched.endswith(after)
    changed = patched[len(before):len(patched) - len(after)]
    assert changed == ("let o=Math.min(1e3*i,3000);t&&(n<100?o=Math.min(o,2e3):n<500&&"
                       "(o=Math.min(o,5e3)))")
    assert "Math.min(1e3*i,1500.0)" in patched_bundle(1.5)


@pytest.mark.parametrize("source", ["let a=1;", "let o=1e3*i;t&&(n<100?o=2e3:n<500&&(o=5e3))"
                                                 * 2], ids=["absent", "twice"])
def test_without_the_polling_code_exactly_once_the_original_is_kept_with_a_warning(source):
    with pytest.warns(RuntimeWarning, match=f"optuna-dashboard {VERSION}: its page's polling "
                                            f"code was found [02] times"):
        assert patched_bundle(3, source) is None


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), True, "3"])
def test_the_interval_is_a_positive_number_of_seconds(seconds):
    with pytest.raises(ValueError, match="seconds must be a positive number"):
        patched_bundle(seconds, "")


@pytest.fixture
def view(tmp_path):
    db = str(tmp_path / "s.db")
    Optimizer({"x": (0.0, 1.0)}, storage=db).close()
    return open_view(db)


def test_the_app_serves_the_patched_bundle_compressed_and_revalidated(view):
    app = create_app(view, reload_interval=2)
    status, headers, body = get(app, BUNDLE_PATH, **{"Accept-Encoding": "gzip, deflate"})
    assert status == "200 OK" and headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(body).decode() == patched_bundle(2)
    status, headers, plain = get(app, BUNDLE_PATH)
    assert status == "200 OK" and plain.decode() == patched_bundle(2)
    assert "javascript" in headers["Content-Type"]
    status, _, body = get(app, BUNDLE_PATH, **{"If-None-Match": headers["Etag"]})
    assert status == "304 Not Modified" and body == b""
    other = get(app, "/static/bundle.js.LICENSE.txt", **{"Accept-Encoding": "identity"})
    assert other[0] == "200 OK"  # the rest: as it was


def test_without_an_interval_or_a_patch_the_original_is_served(view, monkeypatch, tmp_path):
    plain = {"Accept-Encoding": "identity"}  # optuna-dashboard's own route needs the header
    status, _, body = get(create_app(view, reload_interval=None), BUNDLE_PATH, **plain)
    assert status == "200 OK" and body.decode() == ORIGINAL
    other = tmp_path / "bundle.js"
    other.write_text("let a=1;", encoding="utf-8")  # as if another version: no polling code
    monkeypatch.setattr(bundle, "_original", lambda: other)
    with pytest.warns(RuntimeWarning, match=f"optuna-dashboard {VERSION}"):
        app = create_app(view)
    assert get(app, BUNDLE_PATH, **plain)[2].decode() == ORIGINAL
