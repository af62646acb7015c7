"""optuna-dashboard's page, made to ask for new trials at least every few seconds.

A study page of optuna-dashboard polls its server every ``reloadInterval`` seconds, a setting of
the page alone (10 s, with no URL parameter, configuration or server setting to change it;
2 s below 100 trials and 5 s below 500 on the study's top page and trial list).  The only way
to poll a large study faster is to change that code of the page: :func:`patched_bundle` reads
optuna-dashboard's script bundle and makes one narrow substitution in the polling effect, the
interval becoming at most ``seconds`` (and never longer than optuna-dashboard's own), and
:func:`serve_bundle` serves the result in place of the original.  Where the polling code is not
found exactly once (another version of optuna-dashboard), the original is served unchanged
with a warning that names the version.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import re
import warnings
from pathlib import Path

__all__ = ["patched_bundle", "serve_bundle", "POLLING", "BUNDLE_PATH"]

#: the page's polling effect, as optuna-dashboard 0.21's bundle minifies it:
#: ``let ms=1e3*interval;short&&(n<100?ms=2e3:n<500&&(ms=5e3))``
POLLING = re.compile(r"let ([\w$]+)=1e3\*([\w$]+);([\w$]+)&&\(([\w$]+)<100\?\1=2e3:"
                     r"\4<500&&\(\1=5e3\)\)")
#: where optuna-dashboard serves its bundle
BUNDLE_PATH = "/static/bundle.js"


def _version() -> str:
    try:
        return importlib.metadata.version("optuna-dashboard")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _original() -> Path:
    import optuna_dashboard
    return Path(optuna_dashboard.__file__).parent / "public" / "bundle.js"


def patched_bundle(seconds: float, source: str | None = None) -> str | None:
    """optuna-dashboard's bundle (or the script ``source``) polling at least every
    ``seconds``; None, with a warning naming optuna-dashboard's version, when its polling
    code is not found exactly once."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not 0 < seconds < float("inf"):
        raise ValueError(f"seconds must be a positive number, got {seconds!r}.")
    if source is None:
        source = _original().read_text(encoding="utf-8")
    found = POLLING.findall(source)
    if len(found) != 1:
        warnings.warn(f"optuna-dashboard {_version()}: its page's polling code was found "
                      f"{len(found)} times in its script, not once; the page polls at its own "
                      f"interval (10 s on a study of 500 trials or more)", RuntimeWarning,
                      stacklevel=2)
        return None
    ms = repr(round(seconds * 1000, 3))

    def faster(m: re.Match) -> str:
        t, interval, short, n = m.groups()
        return (f"let {t}=Math.min(1e3*{interval},{ms});{short}&&({n}<100?{t}=Math.min({t},"
                f"2e3):{n}<500&&({t}=Math.min({t},5e3)))")
    return POLLING.sub(faster, source, count=1)


def serve_bundle(app, seconds: float) -> bool:
    """Serve :func:`patched_bundle` at :data:`BUNDLE_PATH` of ``app`` (compressed for the
    browsers that accept it, revalidated by its ETag); False (the original served, with a
    warning) when the bundle could not be patched."""
    import bottle

    text = patched_bundle(seconds)
    if text is None:
        return False
    body = text.encode("utf-8")
    tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    packed: list[bytes] = []

    @app.get(BUNDLE_PATH)
    def bundle():
        headers = {"ETag": tag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding",
                   "Content-Type": "application/javascript; charset=UTF-8"}
        if bottle.request.headers.get("If-None-Match") == tag:
            return bottle.HTTPResponse(status=304, headers=headers)
        if "gzip" in bottle.request.headers.get("Accept-Encoding", ""):
            if not packed:
                packed.append(gzip.compress(body, compresslevel=6, mtime=0))
            return bottle.HTTPResponse(packed[0], headers={**headers,
                                                           "Content-Encoding": "gzip"})
        return bottle.HTTPResponse(body, headers=headers)

    return True
