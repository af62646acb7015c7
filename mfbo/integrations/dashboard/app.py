"""The dashboard's web application: optuna-dashboard over a :class:`.view.JournalView`, with
mfbo's own page of figures beside it and every write refused.

``/dashboard`` is optuna-dashboard (history, intermediate values, parallel coordinates,
slices, its importances, the trial table) of every study of the journal; ``/mfbo`` is a page
of mfbo's forest figures (:mod:`.figures`) that reloads itself.  Any request but GET or HEAD
is answered 403 with the reason (the dashboard's buttons that would change a study, save a
note or delete one say so), and the view refuses every write of Optuna's storage interface
as well.

optuna-dashboard keeps the trials it fetched for up to 10 s on large studies before asking
its storage again; the view reads the journal incrementally and keeps its own short cache
(``refresh_interval``), so the dashboard's is bypassed and a new trial shows at the next
poll of the page, which comes at least every ``reload_interval`` seconds (:mod:`.bundle`;
optuna-dashboard's own page polls a study of 500 trials or more every 10 s).  A page load
serialises only the trials that changed since the last one (:mod:`.cache`).
"""

from __future__ import annotations

import html
import importlib

from ...cli.study import CommandError, open_storage
from . import EXTRA_MESSAGE, RELOAD_INTERVAL
from .bundle import serve_bundle
from .cache import serve_settled_trials_once, summarise_new_trials_only
from .figures import KINDS, Figures
from .frozen import READ_ONLY_NOTE
from .view import JournalView

__all__ = ["create_app", "open_view", "PAGE_RELOAD"]
#: seconds between two reloads of the ``/mfbo`` page
PAGE_RELOAD = 5


def _dashboard():
    try:
        return importlib.import_module("optuna_dashboard")
    except ImportError as exc:
        raise ImportError(EXTRA_MESSAGE) from exc


def open_view(storage: str, study_name: str | None = None,
              refresh_interval: float = 0.5) -> JournalView:
    """A :class:`.view.JournalView` of the SQLite file or PostgreSQL URL ``storage``, opened
    read-only; a :class:`~mfbo.cli.study.CommandError` names a missing file or study."""
    try:
        return JournalView(open_storage(storage), refresh_interval, study_name)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


class _Unremembered(dict):
    """A mapping that keeps nothing: in place of optuna-dashboard's times of its last fetch of
    each study's trials, so that it asks the view every time (the view caches)."""

    def __setitem__(self, key, value):
        pass


def create_app(view: JournalView, figures_interval: float = 10.0,
               reload_interval: float | None = RELOAD_INTERVAL):
    """The WSGI application (a Bottle app) serving ``view``: optuna-dashboard at
    ``/dashboard``, mfbo's figures at ``/mfbo``; mfbo's figures are drawn again at most once
    every ``figures_interval`` seconds, and optuna-dashboard's study pages ask for new trials
    at least every ``reload_interval`` seconds (None: at optuna-dashboard's own interval)."""
    bottle = importlib.import_module("bottle")
    app = _dashboard().wsgi(view)
    cache = getattr(app, "_inmemory_cache", None)
    if cache is not None and hasattr(cache, "_trials_last_fetched_at"):
        cache._trials_last_fetched_at = _Unremembered()
    if reload_interval is not None:
        serve_bundle(app, reload_interval)
    serve_settled_trials_once(app, view)
    summarise_new_trials_only(app)
    figures = Figures(view, figures_interval)

    @app.hook("before_request")
    def refuse_writes():
        if bottle.request.method not in ("GET", "HEAD"):
            raise bottle.HTTPResponse(
                body=f'{{"reason": "refused: {READ_ONLY_NOTE}"}}', status=403,
                headers={"Content-Type": "application/json"})

    @app.get("/mfbo")
    def mfbo_page():
        return _page(view, figures)

    @app.get("/mfbo/studies/<study_id:int>/<kind>.png")
    def mfbo_figure(study_id: int, kind: str):
        try:
            view.get_study_name_from_id(study_id)
        except KeyError as exc:
            raise bottle.HTTPError(404, str(exc)) from None
        png = figures.get(study_id).png.get(kind)
        if kind not in KINDS or png is None:
            raise bottle.HTTPError(404, f"no {kind} figure of study {study_id} yet")
        bottle.response.content_type = "image/png"
        return png

    app.mfbo_figures = figures
    return app


def _page(view: JournalView, figures: Figures) -> str:
    """The ``/mfbo`` page: each study's counts, best value and figures."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'>"
             f"<meta http-equiv='refresh' content='{PAGE_RELOAD}'>"
             f"<title>mfbo studies</title></head><body style='font-family:sans-serif'>"
             f"<h1>mfbo studies</h1><p>{html.escape(READ_ONLY_NOTE)}. "
             f"<a href='/dashboard'>optuna-dashboard</a> shows the trials.</p>"]
    for study_id, frozen in enumerate(view.get_all_studies()):
        with view.lock:
            study = view.mfbo_study(study_id)
            counts = {}
            for t in study.trials:
                counts[t.state] = counts.get(t.state, 0) + 1
            best = getattr(study, "best", None)
            n = len(study.trials)
        drawn = figures.get(study_id)
        name = html.escape(frozen.study_name)
        said = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        parts.append(f"<h2 id='study-{study_id}'>{name}</h2>"
                     f"<p><span class='n-trials'>{n}</span> trials ({html.escape(said)}); "
                     f"best value <span class='best'>"
                     f"{'none' if best is None else repr(best.value)}</span>. "
                     f"<a href='/dashboard/studies/{study_id}'>trials</a>. "
                     f"Forest figures: {html.escape(drawn.note)}.</p>")
        for kind in KINDS:
            if kind in drawn.png:
                parts.append(f"<img alt='{kind}' src='/mfbo/studies/{study_id}/{kind}.png"
                             f"?n={drawn.n_complete}' style='max-width:100%'>")
    parts.append("</body></html>")
    return "".join(parts)
