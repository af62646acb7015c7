"""mfbo's forest figures of a running study: drawn once it has enough complete trials, and
drawn again only when it has gained some."""

import threading
import time

import pytest

pytest.importorskip("optuna", reason='the view needs optuna (pip install "mfbo[dashboard]")')

from mfbo import Categorical, Optimizer, Real, Space  # noqa: E402
from mfbo.storage import as_storage  # noqa: E402
from mfbo.integrations.dashboard.figures import (KINDS, MIN_COMPLETE, SPACING,  # noqa: E402
                                                 Drawn, Figures)
from mfbo.integrations.dashboard.view import JournalView  # noqa: E402
from mfbo.study.study import Study  # noqa: E402
from tests.support import SPACE, quad, run_trials  # noqa: E402


def test_drawn_once_there_are_enough_trials_and_again_when_more_arrive(tmp_path):
    path = str(tmp_path / "s.db")
    opt = Optimizer(SPACE, storage=path, random_state=0)
    run_trials(opt, quad, MIN_COMPLETE - 1)
    figures = Figures(JournalView(as_storage(path, create=False, read_only=True), 0), 0)
    drawn = Drawn()
    figures.draw(0, drawn)
    assert drawn.png == {} and f"the forest needs {MIN_COMPLETE}" in drawn.note
    run_trials(opt, quad, 3)
    figures.draw(0, drawn)
    assert set(drawn.png) == set(KINDS) and all(p.startswith(b"\x89PNG")
                                                for p in drawn.png.values())
    first = drawn.png
    figures.draw(0, drawn)
    assert drawn.png is first  # nothing new: not drawn again
    run_trials(opt, quad, 1)
    figures.draw(0, drawn)
    assert drawn.png is not first and drawn.note == f"drawn from {MIN_COMPLETE + 3} complete trials"
    assert drawn.took > 0 and not drawn.due(0.0)  # spaced by SPACING times its duration
    drawn.at -= SPACING * drawn.took
    assert drawn.due(0.0) and not drawn.due(3600.0)
    opt.close()


def test_a_conditional_study_is_drawn(tmp_path):
    path = str(tmp_path / "c.db")
    space = Space({"kind": Categorical(["a", "b"]), "x": Real(0.0, 1.0, when={"kind": "a"})})
    opt = Optimizer(space, storage=path, random_state=0)
    run_trials(opt, lambda kind, x=None: (x or 0.5) + (kind == "b"), 10).close()
    drawn = Drawn()
    Figures(JournalView(as_storage(path, create=False, read_only=True))).draw(0, drawn)
    assert set(drawn.png) == set(KINDS), drawn.note


def test_bad_interval_is_named(tmp_path):
    with pytest.raises(ValueError, match="min_interval"):
        Figures(None, min_interval=-1.0)


def test_a_study_of_several_objectives_says_why_it_has_none(tmp_path):
    class Several:  # a view whose study has several objectives (no single direction)
        lock = threading.RLock()

        def mfbo_study(self, study_id):
            study = Study(SPACE, str(tmp_path / "m.db"))
            study.direction = None
            return study

    drawn = Drawn()
    Figures(Several()).draw(0, drawn)
    assert drawn.png == {} and "several objectives" in drawn.note


def test_the_drawing_thread_says_what_went_wrong_and_goes_on():
    class Broken:  # a view whose journal cannot be read
        lock = threading.RLock()

        def mfbo_study(self, study_id):
            raise RuntimeError("journal unreadable")

    figures = Figures(Broken(), min_interval=0)
    drawn = figures.get(0)
    for _ in range(200):
        if drawn.note != "not drawn yet":
            break
        time.sleep(0.05)
    assert drawn.note == "cannot draw: RuntimeError: journal unreadable"
    assert figures._thread.is_alive()
