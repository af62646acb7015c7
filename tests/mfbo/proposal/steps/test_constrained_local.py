import numpy as np
import pytest

from mfbo import Integer, Optimizer, Real, minimize
from mfbo.proposal.steps import OutcomeSearch
from mfbo.proposal.steps.base import Context
from mfbo.proposal.steps.constrained_local import constrained_local_step


def _corner(x, y):
    """``(x - 1)^2 + (y - 1)^2`` subject to ``x + y - 0.6 <= 0``: the optimum 0.98 at (0.3,
    0.3), on the boundary."""
    return {"loss": (x - 1) ** 2 + (y - 1) ** 2, "c": x + y - 0.6}


def _study(n=40, fail=lambda x, y: False, seed=3, **options):
    """A study of :func:`_corner` told ``n`` random points (a failed trial where ``fail``)."""
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, constraints=["c"],
                    **options)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        x, y = rng.random(2)
        if fail(x, y):
            opt.tell({"x": x, "y": y}, state="failed")
        else:
            opt.tell({"x": x, "y": y}, _corner(x, y))
    return opt


def _ctx(opt, number=None):
    number = opt.study.n_trials if number is None else number
    return Context(opt.proposer, opt.study, number, np.random.default_rng(0))


def test_the_step_goes_to_an_optimum_on_the_constraints_boundary():
    opt = _study()
    Y = opt.study.obs.Y
    best = Y[Y[:, 1] <= 0, 0].min()
    u, _ = constrained_local_step(_ctx(opt))
    x, y = u
    out = _corner(x, y)
    # better than every feasible observation, and on the boundary: the quadratics of a
    # quadratic loss and a linear constraint are (nearly) exact; the step stays in the box
    # of the observations it was fitted to (a trust region)
    assert out["loss"] < best
    assert abs(out["c"]) < 0.01


def test_steps_in_turn_converge_to_the_boundary_optimum():
    opt = _study()
    taken = 0
    for _ in range(20):
        point = constrained_local_step(_ctx(opt))
        if point is None:  # converged: nothing new predicted better
            break
        params = {"x": float(point[0][0]), "y": float(point[0][1])}
        opt.tell(params, _corner(**params))
        taken += 1
    assert 2 <= taken < 20
    assert opt.best_trial.value == pytest.approx(0.98, abs=2e-3)


def test_failed_trials_do_not_enter_the_quadratics():
    in_corner = lambda x, y: x > 0.7  # noqa: E731
    opt = _study(fail=in_corner)
    alone = _study(n=40)
    rows = opt.study.complete_rows
    assert 0 < rows.size < opt.study.obs.n  # (failed trials enter obs, as infeasible)
    assert np.array_equal(opt.study.obs.X[rows],
                          alone.study.obs.X[[i for i, u in enumerate(alone.study.obs.X)
                                             if not in_corner(*u)]])
    # the same models, so the same step (no failed point is near it)
    u, _ = constrained_local_step(_ctx(opt))
    skipped = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, constraints=["c"])
    for params in (t.params for t in alone.study.trials):
        if not in_corner(params["x"], params["y"]):
            skipped.tell(params, _corner(**params))
    v, _ = constrained_local_step(_ctx(skipped, opt.study.n_trials))
    assert np.array_equal(u, v)


def test_the_step_passes_before_a_feasible_trial_with_few_trials_or_when_pending():
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, constraints=["c"])
    rng = np.random.default_rng(0)
    for _ in range(30):  # all infeasible
        x, y = 0.5 + 0.5 * rng.random(2)
        opt.tell({"x": x, "y": y}, _corner(x, y))
    assert constrained_local_step(_ctx(opt)) is None
    assert constrained_local_step(_ctx(_study(n=20))) is None  # fewer than 4 p = 24
    opt = _study()
    assert constrained_local_step(_ctx(opt)) is not None
    opt.ask()
    assert constrained_local_step(_ctx(opt)) is None


def test_with_too_few_trials_for_quadratics_planes_step_along_the_boundary():
    opt = _study(n=16)  # a quadratic in two coordinates needs 24, a plane 12
    assert constrained_local_step(_ctx(opt)) is None
    Y = opt.study.obs.Y
    u, _ = constrained_local_step(_ctx(opt), plane=True)
    out = _corner(*u)
    # a plane of a linear constraint is exact: the step ends on its boundary or inside
    assert out["c"] <= 1e-9 and out["loss"] < Y[Y[:, 1] <= 0, 0].min()


def test_the_step_moves_only_reals_among_trials_that_share_the_integers():
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1), "k": Integer(0, 2)}, random_state=0,
                    constraints=["c"])
    rng = np.random.default_rng(1)
    for _ in range(90):
        x, y = rng.random(2)
        k = int(rng.integers(3))
        out = _corner(x, y)
        opt.tell({"x": x, "y": y, "k": k}, {"loss": out["loss"] + 0.1 * k, "c": out["c"]})
    u, _ = constrained_local_step(_ctx(opt))
    assert opt.space.from_unit(u[None, :])[0]["k"] == 0
    assert abs(_corner(u[0], u[1])["c"]) < 0.02


def test_the_outcome_search_takes_the_step_every_constrained_local_every_proposals(
        monkeypatch):
    import mfbo.proposal.steps.outcomes as outcomes

    opt = _study()
    calls = []

    def spy(ctx, plane):
        calls.append(ctx.number - opt.proposer.n_initial)
        planes.append(plane)
        return None
    planes = []
    monkeypatch.setattr(outcomes, "constrained_local_step", spy)
    n0 = opt.proposer.n_initial
    default = OutcomeSearch()
    assert (default.constrained_local_every, default.constrained_local_plane) == (2, True)
    for every, slots in ((2, [1, 3]), (3, [2]), (0, [])):
        calls.clear()
        step = OutcomeSearch(n_random=50, constrained_local_every=every)
        for number in range(n0, n0 + 4):
            step.propose(Context(opt.proposer, opt.study, number, np.random.default_rng(0)))
        assert calls == slots
    assert set(planes) == {True}  # the default
    planes.clear()
    OutcomeSearch(n_random=50, constrained_local_every=1, constrained_local_plane=False).propose(
        Context(opt.proposer, opt.study, n0, np.random.default_rng(0)))
    assert planes == [False]
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="constrained_local_every"):
            OutcomeSearch(constrained_local_every=bad)
    with pytest.raises(TypeError, match="constrained_local_plane"):
        OutcomeSearch(constrained_local_plane=1)
    with pytest.raises(ValueError, match="outcome_options"):
        Optimizer({"x": Real(0, 1)}, constraints=["c"],
                  outcome_options={"constrained_local_every": -2})


def test_the_step_is_not_taken_with_several_objectives(monkeypatch):
    import mfbo.proposal.steps.outcomes as outcomes

    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0,
                    directions=["minimize", "minimize"])
    rng = np.random.default_rng(0)
    for _ in range(30):
        x, y = rng.random(2)
        opt.tell({"x": x, "y": y}, {"loss": (x, 1 - x + y)})
    monkeypatch.setattr(outcomes, "constrained_local_step",
                        lambda ctx, plane: pytest.fail("taken with two objectives"))
    step = OutcomeSearch(n_random=50, constrained_local_every=1)
    step.propose(Context(opt.proposer, opt.study, 30, np.random.default_rng(0)))


def test_minimize_reaches_a_boundary_optimum_with_the_step_and_stops_short_without_it():
    def objective(x, y):
        return _corner(x, y)
    space = {"x": Real(0, 1), "y": Real(0, 1)}
    with_step = minimize(objective, space, n_calls=45, random_state=0, constraints=["c"])
    without = minimize(objective, space, n_calls=45, random_state=0, constraints=["c"],
                       outcome_options={"constrained_local_every": 0})
    assert with_step.best_value == pytest.approx(0.98, abs=1e-3)
    assert without.best_value > with_step.best_value


def test_a_resumed_sqlite_study_with_crashes_proposes_as_the_uninterrupted_one(
        tmp_path, monkeypatch):
    import mfbo.proposal.steps.outcomes as outcomes

    taken = []
    step = outcomes.constrained_local_step

    def counted(ctx, plane):
        point = step(ctx, plane)
        taken.append(point is not None)
        return point
    monkeypatch.setattr(outcomes, "constrained_local_step", counted)

    def run(opt, n):
        for _ in range(n):
            trial = opt.ask()
            x, y = trial.params["x"], trial.params["y"]
            if x > 0.7:  # a crash, where the constraint is violated
                opt.tell(trial, state="failed")
            else:
                opt.tell(trial, _corner(x, y))
        return opt
    space = {"x": Real(0, 1), "y": Real(0, 1)}
    whole = run(Optimizer(space, constraints=["c"], random_state=2), 40)
    assert sum(taken) >= 3  # the step proposed some of them
    assert any(t.state == "failed" for t in whole.trials)
    db = str(tmp_path / "s.db")
    first = run(Optimizer(space, constraints=["c"], random_state=2, storage=db), 23)
    first.close()
    second = run(Optimizer(space, constraints=["c"], random_state=2, storage=db), 17)
    assert [t.params for t in second.trials] == [t.params for t in whole.trials]
    assert np.array_equal(second.study.complete_rows, whole.study.complete_rows)
