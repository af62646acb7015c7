"""An mfbo trial and study in Optuna's form: values, states, times, attributes."""

from types import SimpleNamespace

import pytest

pytest.importorskip("optuna", reason='the view needs optuna (pip install "mfbo[dashboard]")')

from optuna.study import StudyDirection  # noqa: E402
from optuna.trial import TrialState  # noqa: E402

from mfbo import Integer, Space  # noqa: E402
from mfbo.study.trial import Trial  # noqa: E402
from mfbo.integrations.dashboard.frozen import (READ_ONLY_NOTE, directions_of,  # noqa: E402
                                                distributions_of, frozen_study, frozen_trial,
                                                values_of)

SPACE = distributions_of(Space({"n": Integer(1, 9)}))


def test_each_state_and_its_values_times_and_attributes():
    done = Trial(id=3, params={"n": 2}, state="complete", value=1.5, extra={"mfbo_error": "x"},
                 asked_at=100.0, start=101.0, end=103.0, intermediate_values={0: 4.0})
    ft = frozen_trial(done, SPACE, 7)
    assert (ft.number, ft._trial_id, ft.state, ft.values) == (3, 7, TrialState.COMPLETE, [1.5])
    assert ft.user_attrs == {"extra_mfbo_error": "x", "mfbo_trial_id": 3}
    assert ft.intermediate_values == {0: 4.0}
    assert ft.datetime_complete.timestamp() - ft.datetime_start.timestamp() == 2.0
    pending = frozen_trial(Trial(id=4, params={"n": 5}, asked_at=100.0), SPACE, 8)
    assert pending.state == TrialState.RUNNING and pending.values is None
    assert pending.datetime_start.timestamp() == 100.0 and pending.datetime_complete is None
    pruned = frozen_trial(Trial(id=5, params={"n": 5}, state="pruned", end=1.0), SPACE, 9)
    assert pruned.state == TrialState.PRUNED and pruned.values is None
    pending._validate()
    ft._validate()


def test_several_values_and_constraints_as_optuna_keeps_them():
    # (the fields a trial of a study of several values has; read by name)
    fields = {**vars(Trial(id=0, params={"n": 1}, state="complete", end=2.0)),
              "values": (1.0, 2.0), "constraints": (-1.0,)}
    trial = SimpleNamespace(**fields)
    assert values_of(trial) == [1.0, 2.0]
    assert frozen_trial(trial, SPACE, 0).system_attrs == {"constraints": [-1.0]}
    assert values_of(Trial(id=0, params={}, state="failed")) is None


def test_a_study_says_it_is_read_only_and_keeps_its_directions_and_names():
    study = frozen_study("s", 2, {"direction": "maximize", "surrogate": "mondrian"})
    assert study.directions == [StudyDirection.MAXIMIZE] and study._study_id == 2
    assert study.user_attrs == {"read_only": READ_ONLY_NOTE, "mfbo_surrogate": "mondrian"}
    several = frozen_study("m", 0, {"direction": "minimize", "directions": [
        "minimize", "maximize"], "objectives": ["cost", "score"]})
    assert several.directions == [StudyDirection.MINIMIZE, StudyDirection.MAXIMIZE]
    assert several.system_attrs == {"study:metric_names": ["cost", "score"]}
    assert directions_of({}) == [StudyDirection.MINIMIZE]
