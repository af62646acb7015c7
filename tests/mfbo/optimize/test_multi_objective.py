"""Several objectives and constraints through every room a user meets: the optimizer's tell
and proposals, minimize and the decorator, worker processes, the SQLite journal (resume),
results and figures, and ``mfbo study``."""

import math
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

import mfbo
from mfbo import Optimizer, Real
from mfbo.study.pareto import pareto_trials

SPACE = {"x": Real(0.0, 1.0), "y": Real(0.0, 1.0)}
TWO = {"err": "minimize", "size": "minimize"}


def two_objectives(x, y):
    """Two parabolas whose minima differ: the front is the segment between them, met where
    ``x + y <= 1.2``."""
    return {"err": (x - 0.2) ** 2 + y ** 2, "size": (x - 0.8) ** 2 + (y - 0.5) ** 2,
            "mem": x + y - 1.2}


def run(opt, f, n):
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    return opt


def _events(db):
    return sqlite3.connect(db).execute("SELECT COUNT(*) FROM events").fetchone()[0]


def test_a_study_of_two_objectives_records_values_and_a_front():
    opt = run(Optimizer(SPACE, directions=["minimize", "maximize"], random_state=0),
              lambda x, y: (x ** 2 + y, (x - 1) ** 2 - y), 24)
    trials = opt.trials
    assert all(len(t.values) == 2 and t.value is None for t in trials)
    assert opt.direction is None and opt.directions == ("minimize", "maximize")
    assert {t.origin for t in trials[opt.n_initial:]} <= {"outcomes"}
    with pytest.raises(ValueError, match="no single best trial"):
        opt.best_trial
    front = opt.best_trials
    losses = np.array([[t.values[0], -t.values[1]] for t in trials])
    brute = [i for i in range(len(trials)) if not any(
        np.all(losses[j] <= losses[i]) and np.any(losses[j] < losses[i])
        for j in range(len(trials)))]
    assert [t.id for t in front] == brute


def test_bad_returns_raise_and_record_nothing(tmp_path):
    db = str(tmp_path / "s.db")
    single = Optimizer(SPACE, random_state=0, storage=db, study_name="one")
    multi = Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=0, storage=db,
                      study_name="two")
    for opt, value, error, match in [
            (single, (1.0, 2.0), TypeError, "pass directions"),
            (multi, {"err": 1.0, "size": 2.0}, ValueError, "without the constraint"),
            (multi, {"err": 1.0, "mem": 0.0}, ValueError, "without the objective"),
            (multi, (1.0, 2.0), TypeError, "takes a dict"),
    ]:
        t = opt.ask()
        before = _events(db)
        with pytest.raises(error, match=match):
            opt.tell(t, value)
        assert _events(db) == before and [p.id for p in opt.pending] == [t.id]
        opt.tell(t, None, error="given up")
    two = Optimizer(SPACE, directions=["minimize", "minimize"], random_state=0)
    with pytest.raises(ValueError, match="holds 3 values; this study has 2"):
        two.tell(two.ask(), (1.0, 2.0, 3.0))


def test_a_value_that_is_not_finite_is_a_failed_trial_fed_as_the_worst():
    opt = run(Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=1,
                        on_failure="worst"), two_objectives, 6)
    told = opt.tell(opt.ask(), {"err": math.nan, "size": 1.0, "mem": -1.0})
    assert told.state == "failed" and "objective 'err' is nan" in told.error
    Y = opt.study.obs.Y
    assert Y.shape == (7, 3)
    np.testing.assert_array_equal(Y[-1, :2], Y[:-1, :2].max(axis=0))
    assert Y[-1, 2] > 0  # a failed trial violates the constraint
    pruned = opt.tell(opt.ask(), state="pruned")
    assert pruned.state == "pruned" and opt.study.obs.n == 8


def test_the_outcome_models_share_their_partitions():
    opt = run(Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=2),
              two_objectives, 12)
    forests = [m.forest for m in opt.proposer.models]
    X = np.random.default_rng(0).random((50, 2))
    leaves = [f.apply(X) for f in forests]
    for other in leaves[1:]:
        np.testing.assert_array_equal(other, leaves[0])
    # and their leaves hold each outcome's own values
    means = [m.predict(X)[0] for m in opt.proposer.models]
    assert not np.allclose(means[0], means[1])


def test_constrained_proposals_are_mostly_feasible():
    # feasible where x + y <= 0.6: 18 % of the square
    def f(x, y):
        return {"loss": (x - 1) ** 2 + (y - 1) ** 2, "c": x + y - 0.6}
    opt = run(Optimizer(SPACE, constraints=["c"], random_state=3), f, 40)
    after = opt.trials[opt.n_initial:]
    share = np.mean([t.feasible for t in after])
    assert share >= 0.6, share
    best = opt.best_trial
    assert best.feasible and best.value == min(t.value for t in opt.trials if t.feasible)
    assert best.value < 0.98 * 1.05  # the optimum, on x + y = 0.6, is 0.98


@pytest.mark.parametrize("method", ["hvi", "parego"])
def test_proposals_are_reproducible_and_resume_bit_identical(tmp_path, method):
    def go(opt, n):
        return run(opt, two_objectives, n)
    whole = go(Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=4,
                         pareto_method=method), 20)
    db = str(tmp_path / "s.db")
    kwargs = dict(directions=TWO, constraints=["mem"], random_state=4, pareto_method=method,
                  storage=db)
    first = go(Optimizer(SPACE, **kwargs), 13)
    first.close()
    second = go(Optimizer(SPACE, **kwargs), 7)
    assert [t.params for t in second.trials] == [t.params for t in whole.trials]
    assert [t.values for t in second.trials] == [t.values for t in whole.trials]


def test_a_batch_of_asks_gives_distinct_points():
    opt = run(Optimizer(SPACE, directions=TWO, random_state=5), two_objectives, 12)
    batch = opt.ask(4)
    assert len({tuple(t.params.values()) for t in batch}) == 4


def test_pareto_method_is_checked():
    with pytest.raises(ValueError, match="pareto_method must be one of"):
        Optimizer(SPACE, directions=TWO, pareto_method="nsga")


def test_a_study_cannot_be_reopened_with_other_objectives(tmp_path):
    db = str(tmp_path / "s.db")
    Optimizer(SPACE, directions=TWO, storage=db).close()
    for kwargs in ({}, {"directions": ["minimize", "minimize"]},
                   {"directions": TWO, "constraints": ["mem"]}):
        with pytest.raises(ValueError, match="created with objectives"):
            Optimizer(SPACE, storage=db, **kwargs)


def test_minimize_the_decorator_and_worker_processes(tmp_path):
    res = mfbo.minimize(two_objectives, SPACE, n_calls=14, random_state=0, directions=TWO,
                        constraints=["mem"], progress_bar=False)
    assert res.best_value is None and res.best_trial is None and res.best_trials
    assert res.func_vals.shape == (14, 2)

    @mfbo.objective(SPACE)
    def f(x, y):
        return two_objectives(x, y)
    again = f.minimize(n_calls=14, random_state=0, directions=TWO, constraints=["mem"],
                       progress_bar=False)
    assert [t.values for t in again.trials] == [t.values for t in res.trials]
    db = str(tmp_path / "w.db")
    par = mfbo.minimize(two_objectives, SPACE, n_calls=10, random_state=0, directions=TWO,
                        constraints=["mem"], n_workers=2, storage=db, progress_bar=False)
    assert sum(t.state == "complete" for t in par.trials) == 10
    assert all(t.constraints is not None for t in par.trials)


def test_the_results_of_several_objectives(tmp_path):
    res = mfbo.minimize(two_objectives, SPACE, n_calls=16, random_state=0, directions=TWO,
                        constraints=["mem"], progress_bar=False)
    df = res.to_dataframe()
    assert {"err", "size", "mem", "feasible"} <= set(df.columns)
    assert df["value"].isna().all()
    front = res.pareto_front()
    assert sorted(front["id"]) == [t.id for t in pareto_trials(res.trials, res.objectives)]
    assert front["feasible"].all()
    hv = res.hypervolume_history([1.0, 1.0])
    assert hv.shape == (16,) and np.all(np.diff(hv) >= 0) and hv[-1] > 0
    size = res.for_objective("size")
    assert size.best_value == min(t.values[1] for t in res.trials if t.feasible)
    assert size.importance().main.keys() == {"x", "y"}
    with pytest.raises(ValueError, match="objective must be one of"):
        res.for_objective("latency")
    with pytest.raises(ValueError, match="no best value"):
        res.best_so_far()
    res.plot_pareto_front(tmp_path / "front.png")
    res.plot_hypervolume_history([1.0, 1.0], tmp_path / "hv.png")
    assert (tmp_path / "front.png").stat().st_size > 0 and (tmp_path / "hv.png").is_file()
    three = mfbo.minimize(lambda x, y: (x, y, (x - y) ** 2), SPACE, n_calls=12,
                          random_state=0, directions=["minimize"] * 3, progress_bar=False)
    three.plot_pareto_front()
    with pytest.raises(ValueError, match="reference must be 3 finite values"):
        three.hypervolume_history([1.0, 1.0])
    assert "n_best_trials" in repr(three)


def test_mfbo_study_shows_the_front(tmp_path):
    db = str(tmp_path / "s.db")
    mfbo.minimize(two_objectives, SPACE, n_calls=10, random_state=0, directions=TWO,
                  constraints=["mem"], storage=db, progress_bar=False)

    def cli(*args):
        out = subprocess.run([sys.executable, "-m", "mfbo", "study", *args, db],
                             capture_output=True, text=True, check=True)
        return out.stdout
    shown = cli("show")
    assert "objectives  err: minimize, size: minimize; constraints mem <= 0" in shown
    assert "Pareto front" in shown
    import json
    best = json.loads(cli("best"))
    assert best and set(best[0]) == {"id", "values", "params"}
    assert set(best[0]["values"]) == {"err", "size"}
    csv = cli("export", "--csv", "-")
    assert csv.splitlines()[0].startswith("id,state,value,err,size,mem,feasible,x,y")


def test_the_estimated_best_pools_noisy_and_repeated_evaluations():
    rng = np.random.default_rng(0)
    opt = Optimizer({"x": Real(0.0, 1.0)}, random_state=0)
    for x in np.linspace(0, 1, 41):
        for _ in range(3):  # each configuration evaluated three times, with noise
            opt.tell({"x": float(x)}, float((x - 0.5) ** 2 + rng.normal(0, 0.02)))
    opt.tell({"x": 0.05}, -0.2)  # one lucky draw far from the optimum
    res = opt.result()
    assert res.best_trial.params == {"x": 0.05}
    best = res.estimated_best()
    assert abs(best["params"]["x"] - 0.5) <= 0.15
    assert best["n_evaluations"] == 3 and len(best["trials"]) == 3
    assert best["observed"] == pytest.approx(np.mean([opt.trials[i].value
                                                      for i in best["trials"]]))
    two = mfbo.minimize(two_objectives, SPACE, n_calls=8, random_state=0, directions=TWO,
                        progress_bar=False)
    with pytest.raises(ValueError, match="for_objective"):
        two.estimated_best()
    with pytest.raises(ValueError, match="for_objective"):
        two.importance()
    assert "x" in two.for_objective("err").estimated_best()["params"]


def test_the_estimated_best_pools_neighbours_of_single_noisy_evaluations():
    rng = np.random.default_rng(1)
    opt = Optimizer({"x": Real(0.0, 1.0)}, random_state=0)
    for x in rng.random(80):  # every configuration evaluated once, with noise
        opt.tell({"x": float(x)}, float((x - 0.5) ** 2 + rng.normal(0, 0.02)))
    opt.tell({"x": 0.95}, -0.2)  # a lucky draw far from the optimum, alone
    res = opt.result()
    assert res.best_trial.params == {"x": 0.95}
    # leaves of single trials repeat each trial's value: the lucky draw is predicted best
    assert res.estimated_best(min_samples_split=2)["params"] == {"x": 0.95}
    pooled = res.estimated_best()  # nodes of fewer than 5 trials are not split
    assert abs(pooled["params"]["x"] - 0.5) <= 0.15 and pooled["n_evaluations"] == 1
    with pytest.raises(ValueError, match="min_samples_split"):
        res.estimated_best(min_samples_split=1)


def test_a_pickled_optimizer_goes_on_as_the_original():
    import pickle

    opt = run(Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=6),
              two_objectives, 12)
    copy = pickle.loads(pickle.dumps(opt))
    assert copy.objectives == opt.objectives and len(copy.proposer.models) == 4
    a, b = opt.ask(), copy.ask()
    assert a.params == b.params
    copy.tell(b, two_objectives(**b.params))
    out = two_objectives(**b.params)
    assert copy.trials[-1].values == (out["err"], out["size"])
    assert copy.trials[-1].constraints == (out["mem"],)



# -- constraints given as functions of the objective's return ----------------------------------

CALLS: list = []


def mem_limit(r):
    """A constraint function at module level (picklable), counting its calls."""
    CALLS.append(r)
    return r["mem"] - 0.2


def two_with_raw_memory(x, y):
    out = two_objectives(x, y)
    return {**out, "mem": out["mem"] + 1.2}  # x + y: met where x + y <= 0.2


LIMIT = {"mem_limit": mem_limit}


def test_constraint_functions_through_tell_and_the_journal(tmp_path):
    db = str(tmp_path / "s.db")
    kwargs = dict(directions=TWO, constraints=LIMIT, random_state=2, storage=db)
    opt = Optimizer(SPACE, **kwargs)
    t = opt.ask()
    before = _events(db)
    for value, error, match in [
            ({"err": 1.0, "size": 2.0}, ValueError, "constraint 'mem_limit': its function"),
            ({"err": 1.0, "size": 2.0, "mem": "big"}, ValueError, "raised TypeError"),
            ((1.0, 2.0), ValueError, "raised TypeError"),
    ]:
        with pytest.raises(error, match=match):
            opt.tell(t, value)
        assert _events(db) == before and [p.id for p in opt.pending] == [t.id]
    opt.tell(t, two_with_raw_memory(**t.params))
    run(opt, two_with_raw_memory, 11)
    told = [(t.values, t.constraints) for t in opt.trials]
    assert all(t.constraints == (t.extra["mem"] - 0.2,) for t in opt.trials)
    assert {t.origin for t in opt.trials[opt.n_initial:]} == {"outcomes"}
    opt.close()
    # resumed: the old trials are read as told, the function is not called on them
    CALLS.clear()
    again = Optimizer(SPACE, **kwargs)
    assert not CALLS and [(t.values, t.constraints) for t in again.trials] == told
    run(again, two_with_raw_memory, 2)
    assert len(CALLS) == 2
    again.close()
    # read without the function: the values and the feasibility
    from mfbo.study.study import Study
    study = Study.open(db)
    assert study.objectives.constraints == ("mem_limit",) and study.objectives.functions is None
    assert [t.constraints for t in study.trials[:12]] == [c for _, c in told]
    # and a study of keyed constraints of the same names is the same study
    keyed = Optimizer(SPACE, directions=TWO, constraints=["mem_limit"], storage=db)
    assert keyed.n_finished == 14


def test_constraint_functions_in_minimize_the_decorator_workers_and_results(tmp_path):
    res = mfbo.minimize(two_with_raw_memory, SPACE, n_calls=14, random_state=0,
                        directions=TWO, constraints=LIMIT, progress_bar=False)
    df = res.to_dataframe()
    assert list(df.columns[df.columns.get_loc("size") + 1:][:2]) == ["mem_limit", "feasible"]
    assert np.allclose(df["mem_limit"], df["mem"] - 0.2)
    assert list(df["feasible"]) == list(df["mem_limit"] <= 0)
    assert all(t.feasible for t in res.best_trials)

    @mfbo.objective(SPACE)
    def f(x, y):
        return two_with_raw_memory(x, y)
    again = f.minimize(n_calls=14, random_state=0, directions=TWO, constraints=LIMIT,
                       progress_bar=False)
    assert [t.constraints for t in again.trials] == [t.constraints for t in res.trials]
    # one objective, worker processes (the function runs in this process)
    db = str(tmp_path / "w.db")
    one = mfbo.minimize(_one_with_memory, SPACE, n_calls=10, random_state=0,
                        constraints=LIMIT, n_workers=2, storage=db, progress_bar=False)
    assert sum(t.state == "complete" for t in one.trials) == 10
    assert one.best_trial.feasible and one.best_trial.constraints[0] <= 0
    # a function that raises: a failed trial with a warning, the loop goes on
    with pytest.warns(UserWarning, match="constraint 'mem_limit': its function raised"):
        bad = mfbo.minimize(lambda x, y: {"loss": x}, SPACE, n_calls=4, random_state=0,
                            constraints=LIMIT, progress_bar=False)
    assert [t.state for t in bad.trials] == ["failed"] * 4
    shown = subprocess.run([sys.executable, "-m", "mfbo", "study", "show", db],
                           capture_output=True, text=True, check=True).stdout
    assert "constraints mem_limit <= 0" in shown


def _one_with_memory(x, y):
    return {"loss": (x - 1) ** 2 + (y - 1) ** 2, "mem": x + y}


def test_a_pickled_optimizer_keeps_its_constraint_functions_or_says_why_not():
    import pickle

    opt = run(Optimizer(SPACE, directions=TWO, constraints=LIMIT, random_state=6),
              two_with_raw_memory, 12)
    copy = pickle.loads(pickle.dumps(opt))
    a, b = opt.ask(), copy.ask()
    assert a.params == b.params
    copy.tell(b, two_with_raw_memory(**b.params))
    opt.tell(a, two_with_raw_memory(**a.params))
    assert copy.trials[-1].constraints == opt.trials[-1].constraints
    local = Optimizer(SPACE, constraints={"c": lambda r: r["mem"]}, random_state=0)
    with pytest.raises(TypeError, match="constraint 'c': its function .* cannot be pickled"):
        pickle.dumps(local)
    local.tell(local.ask(), _one_with_memory(0.1, 0.1))  # and it goes on
    assert local.trials[0].constraints == (0.2,)


# -- failures modelled as infeasible ----------------------------------------------------------

def crashing(x, y):
    """Runs out of memory where ``x + y > 0.8``; the best that runs is 0.72 at (0.4, 0.4)."""
    if x + y > 0.8:
        raise MemoryError("out of memory")
    return {"loss": (x - 1) ** 2 + (y - 1) ** 2, "c": x - 0.5}


def _told(opt, n, f=crashing, **kw):
    for _ in range(n):
        t = opt.ask()
        try:
            v = f(**t.params)
        except MemoryError as exc:
            v = exc
        opt.tell(t, v)
    return opt


def test_on_failure_auto_is_infeasible_where_proposals_weigh_outcomes():
    assert Optimizer(SPACE).on_failure == "worst"  # one value: the recipe's proposals
    for kwargs in ({"constraints": ["c"]}, {"directions": TWO},
                   {"directions": {"err": "minimize"}}):
        assert Optimizer(SPACE, **kwargs).on_failure == "infeasible"
    assert Optimizer(SPACE, constraints=["c"], on_failure="worst").on_failure == "worst"
    # nothing failed: the same proposals as with "worst" (the failures' model left out)
    a = run(Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=3),
            two_objectives, 14)
    b = run(Optimizer(SPACE, directions=TWO, constraints=["mem"], random_state=3,
                      on_failure="worst"), two_objectives, 14)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]


def test_on_failure_infeasible_models_failures_as_a_constraint():
    opt = _told(Optimizer(SPACE, on_failure="infeasible", random_state=2), 30)
    after = opt.trials[opt.n_initial:]
    assert {t.origin for t in after} == {"outcomes"}
    assert len(opt.proposer.models) == 2 and opt.study.n_outcomes == 2
    assert np.mean([t.state == "failed" for t in after]) <= 0.5
    assert opt.best_trial.state == "complete" and opt.best_trial.value < 0.85
    # with constraints: one model per objective, constraint and the failures
    cons = _told(Optimizer(SPACE, on_failure="infeasible", constraints=["c"],
                           random_state=2), 20)
    assert len(cons.proposer.models) == 3 and cons.study.obs.Y.shape[1] == 3
    assert cons.best_trial.feasible
    two = _told(Optimizer(SPACE, on_failure="infeasible", directions=TWO, constraints=["mem"],
                          random_state=2), 16, lambda x, y: crashing(x, y) and
                two_objectives(x, y))
    assert len(two.proposer.models) == 4
    assert all(t.state == "complete" and t.feasible for t in two.best_trials)


def test_on_failure_infeasible_resumes_bit_identical_and_pickles(tmp_path):
    import pickle

    kwargs = dict(on_failure="infeasible", constraints=["c"], random_state=7)
    whole = _told(Optimizer(SPACE, **kwargs), 22)
    db = str(tmp_path / "s.db")
    first = _told(Optimizer(SPACE, storage=db, **kwargs), 13)
    first.close()
    second = _told(Optimizer(SPACE, storage=db, **kwargs), 9)
    assert [t.params for t in second.trials] == [t.params for t in whole.trials]
    assert any(t.state == "failed" for t in whole.trials[first.n_initial:13])
    copy = pickle.loads(pickle.dumps(whole))
    assert copy.on_failure == "infeasible" and copy.ask().params == whole.ask().params


def test_on_failure_infeasible_in_minimize_the_decorator_and_workers(tmp_path):
    res = mfbo.minimize(crashing, SPACE, n_calls=16, random_state=0, on_failure="infeasible",
                        progress_bar=False)
    assert res.n_failed and res.best_trial.state == "complete"

    @mfbo.objective(SPACE)
    def f(x, y):
        return crashing(x, y)
    again = f.minimize(n_calls=16, random_state=0, on_failure="infeasible", progress_bar=False)
    assert [t.params for t in again.trials] == [t.params for t in res.trials]
    par = mfbo.minimize(crashing, SPACE, n_calls=10, random_state=0, on_failure="infeasible",
                        n_workers=2, storage=str(tmp_path / "w.db"), progress_bar=False)
    assert sum(t.state in ("complete", "failed") for t in par.trials) == 10

# -- a property-based test where the journal, the outcomes and the models meet -----------------

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule  # noqa: E402

VALUES = st.one_of(st.floats(-1e3, 1e3, allow_nan=False), st.sampled_from([math.nan, math.inf]))
DIRS = {"a": "minimize", "b": "maximize"}


class OutcomeMachine(RuleBasedStateMachine):
    """The record: each told trial's values and constraints (None: failed or pruned), checked
    against the optimizer after every step, across reopenings of its SQLite journal."""

    def __init__(self):
        super().__init__()
        import tempfile
        self.db = f"{tempfile.mkdtemp()}/s.db"
        self.opt = self._open()
        self.told: dict[int, tuple | None] = {}
        self.pending: list[int] = []

    def _open(self):
        return Optimizer(SPACE, directions=DIRS, constraints=["c"], storage=self.db,
                         random_state=0, n_initial=3, n_random_candidates=100)

    @rule()
    def ask(self):
        i = self.opt.ask().id
        # a pending trial of a closed handle is asked again: the same trial, pending already
        if i not in self.pending:
            assert i == max(self.told.keys() | set(self.pending), default=-1) + 1
            self.pending.append(i)

    @precondition(lambda self: self.pending)
    @rule(a=VALUES, b=VALUES, c=st.floats(-1, 1))
    def tell(self, a, b, c):
        i = self.pending.pop(0)
        t = self.opt.tell(i, {"a": a, "b": b, "c": c, "note": 1})
        ok = math.isfinite(a) and math.isfinite(b)
        assert t.state == ("complete" if ok else "failed")
        self.told[i] = ((a, b), (c,)) if ok else None

    @precondition(lambda self: self.pending)
    @rule(bad=st.sampled_from([(1.0, 2.0), {"a": 1.0, "b": 2.0}, {"a": 1, "c": 0}, 3.0]))
    def tell_what_cannot_be_understood(self, bad):
        before = self.opt.n_trials, self.opt.n_finished
        with pytest.raises((TypeError, ValueError)):
            self.opt.tell(self.pending[0], bad)
        assert (self.opt.n_trials, self.opt.n_finished) == before

    @precondition(lambda self: self.pending)
    @rule()
    def prune(self):
        i = self.pending.pop(0)
        assert self.opt.tell(i, state="pruned").state == "pruned"
        self.told[i] = None

    @rule()
    def reopen(self):
        self.opt.close()
        self.opt = self._open()  # pending trials of the closed handle are asked again
        self.pending = [t.id for t in self.opt.pending]

    @invariant()
    def the_record_is_the_study(self):
        trials = self.opt.trials
        for i, want in self.told.items():
            t = trials[i]
            if want is None:
                assert t.values is None and t.state in ("failed", "pruned")
            else:
                assert (t.values, t.constraints) == want and t.extra == {"note": 1}
        done = [trials[i] for i, w in self.told.items() if w is not None]
        Y = self.opt.study.obs.Y
        assert Y.shape[1] == 4  # (on_failure="auto": whether a trial failed, last)
        rows = {tuple(u): row for u, row in zip(self.opt.study.obs.X, Y)}
        for t in done:
            assert list(rows[tuple(t.unit)]) == [t.values[0], -t.values[1], t.constraints[0],
                                                 -1.0]
        for t in trials:
            if t.state == "failed" and tuple(t.unit) in rows:
                assert rows[tuple(t.unit)][-1] == 1.0
        feasible = [t for t in done if t.constraints[0] <= 0]
        front = {t.id for t in feasible if not any(
            o.values[0] <= t.values[0] and o.values[1] >= t.values[1] and
            (o.values[0] < t.values[0] or o.values[1] > t.values[1]) for o in feasible)}
        assert {t.id for t in self.opt.best_trials} == front

    def teardown(self):
        self.opt.close()


OutcomeMachine.TestCase.settings = settings(
    max_examples=12, stateful_step_count=14, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_outcome_state_machine = OutcomeMachine.TestCase


def _constrained(x, y):
    return {"loss": (x - 1) ** 2 + (y - 1) ** 2, "c": x + y - 0.6}


def test_outcome_options_set_the_outcome_search_over_the_recipe_s_settings():
    import dataclasses

    from mfbo.proposal.steps import OutcomeSearch
    options = {"min_feasibility": 0.5, "feasibility": "trees"}
    search = Optimizer(SPACE, constraints=["c"], outcome_options=options).proposer.steps[-1]
    plain = Optimizer(SPACE, constraints=["c"]).proposer.steps[-1]
    assert isinstance(search, OutcomeSearch) and plain.min_feasibility == 0.0
    assert search == dataclasses.replace(plain, **options)
    assert plain.neighbourhood == "joint"  # the Mondrian recipe's, not the class default
    # a study without several objectives or constraints proposes as before
    steps = Optimizer(SPACE, outcome_options=options).proposer.steps
    assert steps == Optimizer(SPACE).proposer.steps


def test_outcome_options_reach_minimize_the_decorator_a_resumed_study_and_optuna(tmp_path):
    options = {"feasibility": "trees", "random_share": 1.0}
    loop = run(Optimizer(SPACE, constraints=["c"], random_state=2, outcome_options=options),
               _constrained, 30)
    other = run(Optimizer(SPACE, constraints=["c"], random_state=2), _constrained, 30)
    assert [t.params for t in loop.trials] != [t.params for t in other.trials]
    res = mfbo.minimize(_constrained, SPACE, n_calls=30, random_state=2, constraints=["c"],
                        n_initial=loop.n_initial, outcome_options=options, progress_bar=False)
    assert [t.params for t in res.trials] == [t.params for t in loop.trials]

    @mfbo.objective(SPACE)
    def f(x, y):
        return _constrained(x, y)
    again = f.minimize(n_calls=30, random_state=2, constraints=["c"], n_initial=loop.n_initial,
                       outcome_options=options, progress_bar=False)
    assert [t.params for t in again.trials] == [t.params for t in loop.trials]
    db = str(tmp_path / "s.db")
    kwargs = dict(constraints=["c"], random_state=2, outcome_options=options, storage=db)
    run(Optimizer(SPACE, **kwargs), _constrained, 18).close()
    resumed = run(Optimizer(SPACE, **kwargs), _constrained, 12)
    assert [t.params for t in resumed.trials] == [t.params for t in loop.trials]
    optuna = pytest.importorskip("optuna", reason="the Optuna sampler needs optuna")
    from mfbo.integrations.optuna import MondrianSampler
    sampler = MondrianSampler(seed=0, outcome_options=options,
                              constraints_func=lambda t: [t.user_attrs["c"]])
    assert sampler._options["outcome_options"] == options
    study = optuna.create_study(sampler=sampler)

    def objective(trial):
        out = _constrained(trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1))
        trial.set_user_attr("c", out["c"])
        return out["loss"]
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study.optimize(objective, n_trials=14)
    assert len(study.trials) == 14


@pytest.mark.parametrize("options, error, match", [
    ("trees", TypeError, "outcome_options must be a mapping"),
    ({"method": "hvi"}, ValueError, "outcome_options has no setting 'method'"),
    ({"nope": 1}, ValueError, "outcome_options has no setting 'nope'"),
    ({"min_feasibility": 1.5}, ValueError, r"outcome_options: OutcomeSearch\(min_feasibility"),
    ({"feasibility": "magic"}, ValueError, r"outcome_options: OutcomeSearch\(feasibility"),
])
def test_bad_outcome_options_are_refused_naming_them(tmp_path, options, error, match):
    db = str(tmp_path / "s.db")
    with pytest.raises(error, match=match):
        Optimizer(SPACE, constraints=["c"], storage=db, outcome_options=options)
    with pytest.raises(error, match=match):
        mfbo.minimize(_constrained, SPACE, n_calls=3, constraints=["c"],
                      outcome_options=options, progress_bar=False)
    assert not (tmp_path / "s.db").exists() or _events(db) == 0
