"""What a pruned trial feeds a surrogate (:mod:`mfbo.study.pruned`): its last loss carried to
the full-budget scale by the complete trials (``on_pruned="shift"`` / ``"rank"``), computed by
hand on small studies; the trials themselves unchanged; a replayed study holds the same rows;
and the repeat of a complete trial's curve, which successive halving can stop."""

import numpy as np
import pytest

import mfbo
from mfbo import InMemoryStorage, Space, Study
from mfbo.pruners import SuccessiveHalvingPruner
from mfbo.study.pruned import carried_loss, repeated
from mfbo.study.trial import Trial
from tests.support import SPACE

S = Space(SPACE)


def _trial(i, values, state="complete", final=None):
    return Trial(id=i, params={}, state=state, value=final, intermediate_values=dict(values))


# complete trials: losses at steps 1 and 3, and their final losses
DONE = [_trial(0, {1: 4.0, 3: 2.0}, final=1.0), _trial(1, {1: 6.0, 3: 5.0}, final=2.0),
        _trial(2, {1: 5.0, 3: 3.0}, final=3.0)]


def test_shift_adds_the_median_improvement_of_the_complete_trials_from_the_step_on():
    pruned = _trial(3, {1: 9.0}, state="pruned")
    # final - loss at step 1: -3, -4, -2; median -3
    assert carried_loss("shift", DONE + [pruned], pruned, 1.0) == 6.0
    # never below the best complete loss (1): 3.5 - 3 = 0.5 -> 1
    assert carried_loss("shift", DONE, _trial(4, {1: 3.5}, "pruned"), 1.0) == 1.0


def test_rank_carries_by_the_quantile_map_and_by_the_offset_of_its_ends():
    # sorted losses at step 3: 2, 3, 5 against sorted finals 1, 2, 3
    assert carried_loss("rank", DONE, _trial(3, {3: 4.0}, "pruned"), 1.0) == 2.5
    assert carried_loss("rank", DONE, _trial(3, {3: 7.0}, "pruned"), 1.0) == 5.0
    assert carried_loss("rank", DONE, _trial(3, {3: 1.5}, "pruned"), 1.0) == 1.0


def test_no_complete_trial_at_the_step_or_no_report_gives_none():
    assert carried_loss("shift", DONE, _trial(3, {2: 1.0}, "pruned"), 1.0) is None
    assert carried_loss("rank", DONE, _trial(3, {}, "pruned"), 1.0) is None
    with pytest.raises(ValueError, match="rule"):
        carried_loss("worst", DONE, _trial(3, {1: 1.0}, "pruned"), 1.0)


def test_maximising_carries_the_losses_and_only_earlier_complete_trials_count():
    flipped = [_trial(t.id, {s: -v for s, v in t.intermediate_values.items()}, final=-t.value)
               for t in DONE]
    pending = _trial(5, {1: -100.0}, "pending")  # not complete: does not count
    pruned = _trial(3, {1: -9.0}, state="pruned")
    assert carried_loss("shift", flipped + [pending, pruned], pruned, -1.0) == 6.0


def test_repeated_finds_a_complete_trial_with_the_same_values_at_every_step_reported():
    assert repeated(_trial(3, {1: 6.0}, "pending"), DONE) is DONE[1]
    assert repeated(_trial(3, {1: 6.0, 3: 5.0}, "pending"), DONE) is DONE[1]
    assert repeated(_trial(3, {1: 6.0, 3: 4.0}, "pending"), DONE) is None
    assert repeated(_trial(3, {}, "pending"), DONE) is None
    assert repeated(DONE[0], DONE[:1]) is None  # not itself


def _study(on_pruned, storage=None):
    storage = storage or InMemoryStorage()
    study = Study(SPACE, storage, on_pruned=on_pruned)
    P = [{"x": 0.1 * i, "y": -0.1 * i} for i in range(4)]
    curves = [({0: 3.0, 2: 1.0}, 1.0), ({0: 5.0, 2: 2.0}, 2.0), ({0: 9.0}, None),
              ({0: 0.5}, None)]
    for i, (curve, final) in enumerate(curves):
        storage.append("default", "ask", {"id": i, "params": P[i], "candidate": None,
                                          "unit": S.to_unit([P[i]])[0].tolist(),
                                          "owner": None, "time": 0.0})
        for step, v in curve.items():
            storage.append("default", "report", {"id": i, "step": step, "value": v})
        storage.append("default", "tell", {
            "id": i, "state": "complete" if final is not None else "pruned", "value": final,
            "extra": {}, "error": None, "start": None, "end": 1.0, "worker": None})
    study.refresh()
    return study, storage


@pytest.mark.parametrize("rule, rows", [("worst", [1.0, 2.0, 9.0, 9.0]),
                                        ("shift", [1.0, 2.0, 6.5, 1.0]),
                                        ("rank", [1.0, 2.0, 6.0, 1.0])])
def test_a_study_feeds_pruned_trials_by_its_rule_and_keeps_them_as_told(rule, rows):
    study, storage = _study(rule)
    np.testing.assert_array_equal(study.obs.y, rows)
    assert [t.state for t in study.trials] == ["complete", "complete", "pruned", "pruned"]
    assert study.trials[2].value is None and study.trials[2].intermediate_values == {0: 9.0}
    assert study.n_pruned == 2 and study.best.id == 0
    again = Study(SPACE, storage, on_pruned=rule)  # replayed: the same rows
    again.refresh()
    np.testing.assert_array_equal(again.obs.y, rows)


def test_a_bad_rule_is_refused():
    with pytest.raises(ValueError, match="on_pruned"):
        Study(SPACE, on_pruned="median")


@pytest.mark.parametrize("stop, expected", [(0, [False, False]), (1, [True, True]),
                                             (2, [False, True])])
def test_successive_halving_stops_a_repeat_of_a_complete_curve_after_the_steps_asked(
        stop, expected):
    opt = mfbo.Optimizer(SPACE, surrogate="random", random_state=0,
                         pruner=SuccessiveHalvingPruner(1, 3, stop_repeats=stop))
    first = opt.ask()
    for step, v in ((1, 2.0), (2, 1.0), (3, 0.5)):
        opt.report(first, step, v)
    opt.tell(first, 0.5)
    copy, decisions = opt.ask(), []
    for step, v in ((1, 2.0), (2, 1.0)):
        opt.report(copy, step, v)
        decisions.append(opt.should_prune(copy))
        if decisions[-1]:
            break
    assert decisions == expected[:len(decisions)] and decisions[-1] is expected[-1]
    other = opt.ask()  # ties the first at step 1 only
    opt.report(other, 1, 2.0)
    assert opt.should_prune(other) is (stop == 1)
    if stop != 1:
        opt.report(other, 2, 1.5)
        assert opt.should_prune(other) is False


def test_stop_repeats_is_a_count_of_steps():
    for bad in (True, -1, 1.5):
        with pytest.raises(ValueError, match="stop_repeats"):
            SuccessiveHalvingPruner(stop_repeats=bad)


def test_an_optimizer_loop_with_the_shift_rule_keeps_its_pruned_trials_as_pruned():
    opt = mfbo.Optimizer(SPACE, random_state=1, n_initial=6, on_pruned="shift",
                         pruner=SuccessiveHalvingPruner(1, 3, stop_repeats=3))
    assert opt.on_pruned == opt.study.on_pruned == "shift"
    for _ in range(20):
        t = opt.ask()
        level = (t.params["x"] - 0.2) ** 2 + (t.params["y"] + 0.1) ** 2
        for step in range(1, 10):
            opt.report(t, step, level + 1.0 / step)
            if step < 9 and opt.should_prune(t):
                opt.tell(t, state="pruned")
                break
        else:
            opt.tell(t, level + 1.0 / 9)
    trials = opt.study.trials
    pruned = [t for t in trials if t.state == "pruned"]
    assert pruned and opt.study.n_pruned == len(pruned) and opt.study.obs.n == len(trials)
    df = opt.result().to_dataframe()
    assert (df["state"] == "pruned").sum() == len(pruned) and df.loc[
        df["state"] == "pruned", "value"].isna().all()
    # each pruned row is its rule's loss from the trials told before it (in order of telling:
    # here, of asking)
    for t in pruned:
        expected = carried_loss("shift", trials[:t.id], t, 1.0)
        assert expected is not None and opt.study.obs.y[t.id] == expected


def test_the_optimizer_refuses_an_unknown_rule_before_touching_the_storage(tmp_path):
    db = tmp_path / "s.db"
    with pytest.raises(ValueError, match="on_pruned"):
        mfbo.Optimizer(SPACE, storage=str(db), on_pruned="median")
    assert not db.exists()
    assert mfbo.Optimizer(SPACE).on_pruned == "worst"


def _pruning_objective(x, y, trial):
    level = (x - 0.2) ** 2 + (y + 0.1) ** 2
    for step in range(1, 10):
        trial.report(level + 1.0 / step, step)
        if trial.should_prune():
            raise mfbo.TrialPruned()
    return level + 1.0 / 9


def test_minimize_passes_the_rule_and_a_reopened_study_replays_its_rows(tmp_path):
    db = str(tmp_path / "s.db")
    options = dict(random_state=3, n_initial=6, progress_bar=False, on_pruned="shift",
                   pruner=SuccessiveHalvingPruner(1, 3))
    res = mfbo.minimize(_pruning_objective, SPACE, n_calls=18, storage=db, **options)
    assert res.n_pruned > 0
    first = mfbo.Optimizer(SPACE, storage=db, on_pruned="shift", random_state=3)
    worst = mfbo.Optimizer(SPACE, storage=db, random_state=3)
    pruned = [t.id for t in first.study.trials if t.state == "pruned"]
    y_shift, y_worst = first.study.obs.y, worst.study.obs.y
    complete = [t.id for t in first.study.trials if t.state == "complete"]
    np.testing.assert_array_equal(y_shift[complete], y_worst[complete])
    assert all(y_shift[i] <= y_worst[i] for i in pruned)
    assert any(y_shift[i] < y_worst[i] for i in pruned)
    for t in first.study.trials:
        if t.state == "pruned":
            expected = carried_loss("shift", first.study.trials[:t.id], t, 1.0)
            assert y_shift[t.id] == (expected if expected is not None else y_worst[t.id])
    first.close()
    worst.close()


def test_a_study_pickled_before_the_setting_reads_as_worst():
    study = Study(SPACE)
    state = study.__getstate__()
    state.pop("on_pruned")
    again = Study.__new__(Study)
    again.__setstate__(state)
    assert again.on_pruned == "worst"
