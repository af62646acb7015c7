"""What the dashboard keeps between requests, so that loading a page of a large study costs
its server little more than the trials that changed since the last load.

optuna-dashboard answers ``/api/studies/<id>`` by serialising every trial of the study
(``after``, a query parameter, skips the first ones), and rescans every trial to update its
search space and attribute summary whenever no trial of the study is running.  A trial of an
mfbo journal that has finished never changes (the view is read-only, so no note or attribute
is added to it either), so:

- :func:`serve_settled_trials_once` wraps the route: the JSON text of the leading finished
  trials is kept, optuna-dashboard is asked only for the trials after them (through its own
  ``after`` parameter, so its answer stays its own: best trials, search spaces, notes) and the
  kept text is spliced in; the answer is the same JSON, byte for byte;
- :func:`summarise_new_trials_only` makes its summary cache read only the trials from the first
  one it has not seen finished.

Both go through optuna-dashboard's route table (Bottle's public ``Route.callback``) and the
in-memory cache object its app carries; where either is not there (another version), the
dashboard works unchanged, at its own cost.
"""

from __future__ import annotations

import json
import threading
import urllib.parse

__all__ = ["serve_settled_trials_once", "summarise_new_trials_only", "SETTLED", "DETAIL_RULE"]

#: the states (as optuna-dashboard's API writes them) of a trial that can no longer change
SETTLED = frozenset({"Complete", "Pruned", "Fail"})
#: optuna-dashboard's route of a study with its trials
DETAIL_RULE = "/api/studies/<study_id:int>"
_MARK = "\x00mfbo: the kept trials go here\x00"


class _Kept:
    """The JSON text of the leading settled trials of one study, in order."""

    def __init__(self, name: str):
        self.name = name
        self.texts: list[str] = []
        self._joined: tuple[int, int, str] | None = None
        self.lock = threading.Lock()
        self.serving = threading.Lock()

    def add(self, start: int, trials: list) -> None:
        """Keep the text of the serialised ``trials`` (those from position ``start``) that
        extend the kept run of settled trials."""
        with self.lock:
            skip = len(self.texts) - start
            if skip < 0:
                return
            for trial in trials[skip:]:
                if trial.get("state") not in SETTLED:
                    break
                self.texts.append(json.dumps(trial))

    def text(self, start: int, stop: int) -> str:
        """The kept trials ``start:stop`` as the items of a JSON list."""
        with self.lock:
            if self._joined is None or self._joined[:2] != (start, stop):
                self._joined = (start, stop, ", ".join(self.texts[start:stop]))
            return self._joined[2]


def _route(app, rule: str, method: str = "GET"):
    return next((r for r in app.routes if r.rule == rule and r.method == method), None)


def _ask_after(bottle, after: int) -> None:
    """Make the current request's ``after`` parameter ``after`` (for the callback it is
    handed to next)."""
    environ = bottle.request.environ
    query = urllib.parse.parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    query = [(k, v) for k, v in query if k != "after"] + [("after", str(after))]
    environ["QUERY_STRING"] = urllib.parse.urlencode(query)
    for parsed in ("bottle.request.query", "bottle.request.params"):
        environ.pop(parsed, None)


def serve_settled_trials_once(app, view) -> bool:
    """Wrap optuna-dashboard's study route of ``app`` (serving ``view``) so that each settled
    trial is serialised once (see the module); False when ``app`` has no such route."""
    import bottle

    route = _route(app, DETAIL_RULE)
    if route is None:
        return False
    original = route.callback
    kept: dict[int, _Kept] = {}
    lock = threading.Lock()

    def answer(cache: _Kept, study_id: int, after: int):
        """optuna-dashboard's answer, from ``cache`` where it can."""
        held = len(cache.texts)
        if after < 0 or after >= held:
            body = original(study_id)
            if isinstance(body, dict) and after >= 0:
                cache.add(after, body.get("trials", []))
            return body
        _ask_after(bottle, held)
        body = original(study_id)
        if not isinstance(body, dict) or "trials" not in body:
            return body
        fresh = body["trials"]
        cache.add(held, fresh)
        items = cache.text(after, held)
        if fresh:
            items += ", " + json.dumps(fresh)[1:-1]
        body["trials"] = [_MARK]
        return json.dumps(body).replace(f"[{json.dumps(_MARK)}]", f"[{items}]", 1)

    def study_detail(study_id: int):
        try:
            after = int(bottle.request.query.get("after", "0"))
            name = view.get_study_name_from_id(study_id)
        except (ValueError, KeyError):
            return original(study_id)  # its own answer: 400, 404 or 500
        with lock:
            if study_id not in kept or kept[study_id].name != name:
                kept[study_id] = _Kept(name)
            cache = kept[study_id]
        with cache.serving:  # one request of a study at a time: the first, which reads
            return answer(cache, study_id, after)  # every trial, is not done twice

    route.callback = study_detail
    route.reset()
    return True


def summarise_new_trials_only(app) -> bool:
    """Make optuna-dashboard's per-study summary of search spaces and attributes (kept in
    ``app``'s in-memory cache) read only the trials from the first one not yet seen finished,
    where it would read every trial again; False when ``app`` has no such cache."""
    cache = getattr(app, "_inmemory_cache", None)
    held = getattr(cache, "_cached_extra_study_property_cache", None)
    try:
        from optuna_dashboard._inmemory_cache import _CachedExtraStudyProperty
    except ImportError:
        return False
    if not isinstance(held, dict) or not hasattr(_CachedExtraStudyProperty, "update"):
        return False

    class Summary(_CachedExtraStudyProperty):
        """The summary, fed only the trials from ``seen`` on (those before are finished and
        already counted)."""

        def __init__(self):
            super().__init__()
            self.seen = 0

        def update(self, trials) -> None:
            if self.seen > len(trials) or any(trials[i].number != i for i in {0, self.seen - 1}
                                              if 0 <= i < len(trials)):
                self.__init__()  # not a view's list in number order: read it all
            fresh = trials[self.seen:]
            self._cursor = -1
            super().update(fresh)
            unfinished = [t.number for t in fresh if not t.state.is_finished()]
            self.seen = min(unfinished, default=len(trials))

    class Summaries(dict):
        def get(self, key, default=None):
            if key not in self:
                self[key] = Summary()
            return self[key]

    cache._cached_extra_study_property_cache = Summaries(held)
    return True
