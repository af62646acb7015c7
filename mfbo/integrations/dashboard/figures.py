"""mfbo's own figures of running studies, drawn in the background for the dashboard's
``/mfbo`` page: the forest's functional-ANOVA importance and partial dependence
(:func:`mfbo.results.plots.plot_importance` and :func:`~mfbo.results.plots.plot_objective`).

One Mondrian forest is fitted to a study's complete trials
(:func:`mfbo.results.surface.fit_forest`) and both figures are drawn from it, on a thread of
their own so that a slow drawing never holds up the dashboard.  A study's figures are drawn
again once it has gained complete trials and both ``min_interval`` seconds and
:data:`SPACING` times the last drawing's duration have passed since they were last drawn (so
drawing a large study takes at most a fifth of a processor); only studies whose figures were
asked for are drawn.
"""

from __future__ import annotations

import threading
import time

from ...results.plots import plot_importance, plot_objective
from ...results.result import OptimizeResult
from ...results.surface import fit_forest
from ...study.study import Study

__all__ = ["Figures", "KINDS", "MIN_COMPLETE", "SPACING"]

#: the figures drawn for each study, by the name of their route
KINDS = ("importance", "dependence")
#: complete trials a study needs before its forest is fitted
MIN_COMPLETE = 5
#: a study is drawn again no sooner than this many times its last drawing's duration after it
SPACING = 5.0


class Drawn:
    """A study's figures as last drawn: PNG bytes by kind, or the reason there are none."""

    def __init__(self):
        self.png: dict[str, bytes] = {}
        self.n_complete = -1
        self.at = float("-inf")
        self.took = 0.0  # seconds the last drawing took
        self.note = "not drawn yet"

    def due(self, min_interval: float) -> bool:
        """Whether enough time has passed since the last drawing to draw again."""
        return time.monotonic() - self.at >= max(min_interval, SPACING * self.took)


class Figures:
    """Draws the figures of the studies of ``view`` (a :class:`.view.JournalView`) on a
    background thread, each study at most once every ``min_interval`` seconds."""

    def __init__(self, view, min_interval: float = 10.0):
        if isinstance(min_interval, bool) or not isinstance(min_interval, (int, float)) \
                or not 0 <= min_interval < float("inf"):
            raise ValueError(f"min_interval must be a non-negative number of seconds, got "
                             f"{min_interval!r}.")
        self.view = view
        self.min_interval = float(min_interval)
        self._drawn: dict[int, Drawn] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def get(self, study_id: int) -> Drawn:
        """The figures of ``study_id`` as last drawn (asking for them has them drawn, and
        drawn again as the study grows)."""
        with self._lock:
            drawn = self._drawn.setdefault(study_id, Drawn())
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="mfbo-dashboard-figures")
                self._thread.start()
        self._wake.set()
        return drawn

    def _loop(self) -> None:
        while True:
            self._wake.wait(timeout=max(1.0, self.min_interval))
            self._wake.clear()
            with self._lock:
                studies = list(self._drawn.items())
            for study_id, drawn in studies:
                if not drawn.due(self.min_interval):
                    continue
                try:
                    self.draw(study_id, drawn)
                except Exception as exc:  # noqa: BLE001 - said on the page; the thread goes on
                    drawn.note = f"cannot draw: {type(exc).__name__}: {exc}"

    def draw(self, study_id: int, drawn: Drawn) -> None:
        """Draw the figures of ``study_id`` into ``drawn`` if it gained complete trials."""
        with self.view.lock:
            study = self.view.mfbo_study(study_id)
            trials = Study.copies(study.trials)
            space, direction = study.space, study.direction
        n_complete = sum(t.state == "complete" for t in trials)
        if n_complete == drawn.n_complete:
            return
        drawn.at = time.monotonic()
        if direction is None:  # several objectives
            drawn.note = "none for a study of several objectives (they describe one value)"
        elif n_complete < MIN_COMPLETE:
            drawn.note = f"{n_complete} complete trials; the forest needs {MIN_COMPLETE}"
        else:
            drawn.png, drawn.note = self._figures(OptimizeResult(space, trials, direction),
                                                  drawn.png)
        drawn.n_complete = n_complete
        drawn.took = time.monotonic() - drawn.at

    @staticmethod
    def _figures(result, before: dict) -> tuple[dict, str]:
        """``(PNG bytes by kind, note)`` of ``result``; ``before`` and the reason when they
        cannot be drawn."""
        try:
            forest = fit_forest(result)
            figures = {"importance": plot_importance(result, model=forest),
                       "dependence": plot_objective(result, model=forest)}
            png = {kind: fig._repr_png_() for kind, fig in figures.items()}
        except (ValueError, TypeError) as exc:
            return before, f"cannot draw: {exc}"
        n = sum(t.state == "complete" for t in result.trials)
        return png, f"drawn from {n} complete trials"
