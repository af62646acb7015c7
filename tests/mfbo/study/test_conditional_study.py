"""Conditional studies: every room a space goes through (ask/tell, minimize, the decorator,
batches, finite spaces, enqueue and tell of outside configurations, the journal resumed in a
new process, several worker processes, one of them killed mid-evaluation)."""

import pickle

import numpy as np
import pytest

import mfbo
from benchmarks.harness.shared_workers import (conditional_objective, conditional_space,
                                               journal_check, kill_in_first_evaluation,
                                               start_worker)
from mfbo import Categorical, Integer, Optimizer, Real, Space, SQLiteStorage, StudyExhausted

SPACE = Space({
    "model": ["svm", "rf", "knn"],
    "C": Real(1e-3, 1e3, log=True, when={"model": "svm"}),
    "kernel": Categorical(["rbf", "poly"], when={"model": "svm"}),
    "degree": Integer(2, 5, when={"kernel": "poly"}),
    "trees": Integer(10, 500, step=10, when={"model": "rf"}),
    "k": Integer(1, 50, when={"model": "knn"}),
    "lr": Real(0.0, 1.0, step=0.1),
}, forbidden=[{"kernel": "poly", "degree": 5}])


def loss(model, lr, C=None, kernel=None, degree=None, trees=None, k=None):
    """A loss that reads exactly the active parameters of its branch (else an error)."""
    given = {"C": C, "kernel": kernel, "degree": degree, "trees": trees, "k": k}
    want = {"svm": {"C", "kernel"} | ({"degree"} if kernel == "poly" else set()),
            "rf": {"trees"}, "knn": {"k"}}[model]
    if {n for n, v in given.items() if v is not None} != want:
        raise AssertionError(f"inactive or missing parameters: {model} {given}")
    if model == "svm":
        v = (np.log10(C) - 1) ** 2 / 4 + (0.3 if kernel == "poly" else 0.0) + 0.1 * (degree or 0)
    elif model == "rf":
        v = 0.5 + ((trees - 300) / 300) ** 2
    else:
        v = 0.8 + ((k - 10) / 40) ** 2
    return float(v + (lr - 0.3) ** 2)


def check_trials(trials):
    keys = [tuple(sorted(t.params.items())) for t in trials]
    assert len(set(keys)) == len(keys)  # never asked twice
    for t in trials:
        assert SPACE.validate(t.params) == t.params  # active parameters only, allowed
        assert t.state == "complete"


@pytest.mark.parametrize("surrogate", ["mondrian", "rf-smac", "random"])
def test_every_surrogate_proposes_active_allowed_new_configurations(surrogate):
    r = mfbo.minimize(loss, SPACE, n_calls=24, random_state=0, surrogate=surrogate,
                      progress_bar=False, n_random_candidates=256)
    check_trials(r.trials)
    assert {t.params["model"] for t in r.trials} == {"svm", "rf", "knn"}
    df = r.to_dataframe()
    assert df.loc[df.model == "rf", "C"].isna().all()
    assert df.loc[df.model == "svm", "C"].notna().all()


def test_batches_thompson_and_the_decorator():
    opt = Optimizer(SPACE, random_state=1, n_initial=6, n_random_candidates=256)
    for _ in range(5):
        batch = opt.ask(3)
        for t in batch:
            opt.tell(t, loss(**t.params))
    check_trials(opt.trials)
    opt = Optimizer(SPACE, random_state=2, n_initial=6, batch_strategy="thompson",
                    n_random_candidates=256)
    for _ in range(4):
        for t in opt.ask(3):
            opt.tell(t, loss(**t.params))
    check_trials(opt.trials)

    @mfbo.objective(SPACE)
    def f(model, lr, C=None, kernel=None, degree=None, trees=None, k=None):
        return loss(model, lr, C, kernel, degree, trees, k)

    r = f.minimize(n_calls=12, random_state=0, progress_bar=False)
    check_trials(r.trials)
    again = pickle.loads(pickle.dumps(SPACE))
    assert again == SPACE and again.forbidden == SPACE.forbidden


def test_a_finite_conditional_space_is_searched_exhaustively_once():
    space = Space({"a": ["x", "y"], "b": Integer(0, 3, when={"a": "x"}),
                   "c": Categorical([True, False], when={"a": "y"})},
                  forbidden=[{"a": "x", "b": 3}])
    opt = Optimizer(space, random_state=0, n_initial=2)
    seen = []
    while True:
        try:
            t = opt.ask()
        except StudyExhausted:
            break
        seen.append(t.params)
        opt.tell(t, float(len(seen)))
    want = [{"a": "x", "b": b} for b in range(3)] + [{"a": "y", "c": c} for c in (True, False)]
    key = lambda p: sorted(p.items(), key=str)  # noqa: E731
    assert sorted(map(key, seen)) == sorted(map(key, want))


def test_outside_configurations_are_checked_against_the_conditions():
    opt = Optimizer(SPACE, random_state=0)
    # a DataFrame row's NaN for an inactive parameter is no value
    opt.enqueue({"model": "rf", "trees": 120, "lr": 0.3, "C": float("nan")})
    t = opt.ask()
    assert t.params == {"model": "rf", "trees": 120, "lr": 0.3}
    opt.tell(t, 1.0)
    with pytest.raises(ValueError, match="'C' = 1.0 is given but inactive"):
        opt.enqueue({"model": "rf", "trees": 120, "lr": 0.3, "C": 1.0})
    with pytest.raises(ValueError, match="forbidden"):
        opt.enqueue({"model": "svm", "C": 1.0, "kernel": "poly", "degree": 5, "lr": 0.0})
    assert len(opt.trials) == 1 and opt.study.queued == []  # nothing changed


def test_a_conditional_study_resumes_in_sqlite(tmp_path):
    db = str(tmp_path / "c.db")
    options = dict(random_state=3, progress_bar=False, n_random_candidates=256, n_initial=5)
    whole = mfbo.minimize(loss, SPACE, n_calls=20, **options)
    first = mfbo.minimize(loss, SPACE, n_calls=12, storage=db, **options)
    again = mfbo.minimize(loss, SPACE, n_calls=20, storage=db, **options)
    assert [t.params for t in first.trials] == [t.params for t in whole.trials[:12]]
    assert [t.params for t in again.trials[:12]] == [t.params for t in first.trials]
    check_trials(again.trials)
    assert len(again.trials) == 20
    # the stored space is the conditional one: without its forbidden pair it is another
    loose = Space(SPACE.dimensions)
    with pytest.raises(ValueError, match="space"):
        Optimizer(loose, storage=db)


def test_conditional_workers_share_a_study_and_survive_a_kill(tmp_path):
    db = str(tmp_path / "w.db")
    grace = 1.0
    options = dict(surrogate="random", heartbeat_interval=0.1, grace_period=grace,
                   conditional=True)
    victim = start_worker(db, "c", 14, 0.0, 9, slow_first=600, host="another-host", **options)
    trial, _ = kill_in_first_evaluation(victim)
    procs = [start_worker(db, "c", 14, 0.02, seed, **options) for seed in range(2)]
    for p in procs:
        p.communicate(timeout=240)
        assert p.returncode == 0
    check = journal_check(SQLiteStorage(db), "c")
    assert check["finished"] == 14 and check["pending"] == 0 and check["told_twice"] == []
    assert check["asked_twice"] == 0 and check["claims"] >= 1
    opt = Optimizer(conditional_space(), storage=db, study_name="c", surrogate="random")
    assert opt.trials[trial].state == "complete"  # the killed worker's trial, taken over
    for t in opt.trials:
        assert conditional_space().validate(t.params) == t.params
        assert t.value == pytest.approx(conditional_objective(**t.params))
