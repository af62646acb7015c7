"""OutcomeSearch: its settings, the method it chooses, and the points it scores."""

import numpy as np
import pytest

from mfbo import Integer, Optimizer, Real
from mfbo.proposal.steps import AcquisitionSearch, OutcomeSearch
from mfbo.proposal.steps.outcomes import OutcomeModels, log_probability_feasible_trees
from mfbo.proposal.steps.base import Context


def test_settings_and_methods():
    assert OutcomeSearch().chosen_method(1) == "ei"
    assert OutcomeSearch().chosen_method(2) == "hvi"
    assert OutcomeSearch().chosen_method(3) == "parego"
    assert OutcomeSearch(method="hvi").chosen_method(4) == "hvi"
    assert isinstance(OutcomeSearch(), AcquisitionSearch)
    with pytest.raises(ValueError, match=r"OutcomeSearch\(method=...\) must be one of"):
        OutcomeSearch(method="nsga")
    with pytest.raises(ValueError, match="n_random"):
        OutcomeSearch(n_random=-1)
    for bad in (0, 1.5, True, "half"):
        with pytest.raises(ValueError, match=r"random_share=\.\.\.\) must be a number"):
            OutcomeSearch(random_share=bad)
    with pytest.raises(ValueError, match="stop_after"):
        OutcomeSearch(stop_after=-1)
    with pytest.raises(ValueError, match=r"feasibility=\.\.\.\) must be one of"):
        OutcomeSearch(feasibility="gaussian")


def test_the_search_scores_its_share_of_the_random_points(monkeypatch):
    import mfbo.proposal.steps.search as search

    seen = []

    def spy(score, levels, **kwargs):
        seen.append((kwargs["n_random"], kwargs["search_patience"]))
        return np.random.default_rng(0).random((10, len(levels)))

    monkeypatch.setattr(search, "maximize_random_local", spy)
    opt = _opt(directions=["minimize", "minimize"], constraints=["c"])
    for step, want in [(OutcomeSearch(n_random=2000), (1000, 2)),
                       (OutcomeSearch(n_random=3, random_share=0.1, search_patience=4), (1, 4)),
                       (OutcomeSearch(n_random=7, stop_after=0), (4, 0))]:
        ctx = Context(opt.proposer, opt.study, opt.study.n_trials, np.random.default_rng(0))
        step.propose(ctx)
        assert seen[-1] == want


def _opt(**kwargs):
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, **kwargs)
    for _ in range(12):
        t = opt.ask()
        x, y = t.params["x"], t.params["y"]
        opt.tell(t, {"loss": (x, (1 - x) ** 2 + y), "c": y - 0.5})
    return opt


@pytest.mark.parametrize("method", ["hvi", "parego"])
def test_the_score_prefers_feasible_points_near_the_front(method):
    opt = _opt(directions=["minimize", "minimize"], constraints=["c"], pareto_method=method)
    step = next(s for s in opt.proposer.steps if isinstance(s, OutcomeSearch))
    ctx = Context(opt.proposer, opt.study, opt.study.n_trials, np.random.default_rng(0))
    score = step.scorer(ctx)
    # y = 0 is on the front and feasible; y = 0.95 is dominated and violates the constraint
    good, bad = score(np.array([[0.5, 0.0], [0.5, 0.95]]))
    assert good > bad
    starts = step.starts(ctx)
    Y = opt.study.obs.Y
    feasible_front = {tuple(u) for u, row in zip(opt.study.obs.X, Y) if row[2] <= 0}
    assert {tuple(u) for u in starts} <= feasible_front


def _proposals(k, m, method, monkeypatch, joint):
    """30 asks (two of them batches) of a study of ``k`` objectives and ``m`` constraints."""
    monkeypatch.setattr("mfbo.proposal.steps.outcomes.OutcomeModels.joint", joint)
    space = {f"x{i}": Real(0.0, 1.0) for i in range(3)}
    kwargs = {} if k == 1 else {"directions": ["minimize"] * k}
    opt = Optimizer(space, random_state=3, n_initial=4, pareto_method=method,
                    constraints=[f"c{i}" for i in range(m)] or None, **kwargs)
    rows = []
    for i in range(30):
        trials = opt.ask(2) if i % 10 == 9 else [opt.ask()]
        for t in trials:
            x = np.array(list(t.params.values()))
            values = tuple(float(((x - 0.2 * (j + 1)) ** 2).sum()) for j in range(k))
            cons = {f"c{c}": float(x[c] - 0.8) for c in range(m)}
            rows.append((t.origin, t.params))
            opt.tell(t, {"loss": values if k > 1 else values[0], **cons} if m else
                     (values if k > 1 else values[0]))
    return rows


@pytest.mark.parametrize("k, m, method", [(1, 2, "auto"), (2, 0, "hvi"), (2, 1, "hvi"),
                                          (3, 2, "parego")])
def test_the_models_predicted_together_propose_what_each_predicting_alone_does(
        k, m, method, monkeypatch):
    together = _proposals(k, m, method, monkeypatch, True)
    alone = _proposals(k, m, method, monkeypatch, False)
    assert sum(origin == "outcomes" for origin, _ in together) >= 20
    assert together == alone


def _assert_predicts_as_each_model(joint, models, U):
    moments, trees = joint.predict_both(U)
    for model, (m, s), (tm, tv), (m2, s2) in zip(models, moments, trees, joint.predict(U)):
        want_m, want_s = model.predict(U)
        want_tm, want_tv = model.predict_per_tree(U)
        for got, want in [(m, want_m), (s, want_s), (m2, want_m), (s2, want_s), (tm, want_tm),
                          (tv, want_tv)]:
            np.testing.assert_array_equal(got, want)


def test_outcome_models_predict_as_each_model():
    opt = _opt(directions=["minimize", "minimize"], constraints=["c"])
    models = opt.proposer.models
    joint = OutcomeModels(models)
    assert joint._shared is not None
    U = np.random.default_rng(0).random((300, 2))
    _assert_predicts_as_each_model(joint, models, U)


def test_outcome_models_with_trends_predict_as_each_model():
    opt = Optimizer({"x": Real(0, 1), "n": Integer(1, 9)}, random_state=0,
                    directions=["minimize", "minimize"], constraints=["c"])
    for _ in range(16):
        t = opt.ask()
        x, n = t.params["x"], t.params["n"]
        opt.tell(t, {"loss": (x * n, (1 - x) ** 2 + n), "c": x - 0.5})
    models = opt.proposer.models
    joint = OutcomeModels(models)
    assert joint._shared is not None
    assert all(getattr(model, "_beta", None) is not None for model in models)
    U = np.random.default_rng(1).random((200, 2))
    _assert_predicts_as_each_model(joint, models, U)


def test_models_that_do_not_share_partitions_are_each_predicted_alone():
    mine = _opt(directions=["minimize", "minimize"]).proposer.models[0]
    other = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=1,
                      directions=["minimize", "minimize"])
    for _ in range(12):
        t = other.ask()
        other.tell(t, (t.params["x"], t.params["y"]))
    joint = OutcomeModels([mine, other.proposer.models[0]])
    assert joint._shared is None
    U = np.random.default_rng(0).random((50, 2))
    for model, (m, s) in zip(joint.models, joint.predict(U)):
        want_m, want_s = model.predict(U)
        np.testing.assert_array_equal(m, want_m)
        np.testing.assert_array_equal(s, want_s)


def test_the_probability_of_feasibility_under_the_trees_mixture():
    from scipy.stats import norm

    # two points, three trees, two constraints: each tree's means and variances
    c1 = (np.array([[-1.0, 0.0, 2.0], [5.0, 6.0, 30.0]]), np.array([[1.0, 4.0, 1.0],
                                                                    [1.0, 1.0, 0.0]]))
    c2 = (np.array([[0.5, -0.5, 0.0], [-9.0, -9.0, -9.0]]), np.ones((2, 3)))
    got = log_probability_feasible_trees([c1, c2], [0.0, 0.25])
    with np.errstate(divide="ignore"):  # (a tree of zero variance: probability 0 or 1)
        want = [np.log(np.mean([norm.cdf(-m1 / np.sqrt(v1)) * norm.cdf((0.25 - m2) / np.sqrt(v2))
                                for m1, v1, m2, v2 in zip(c1[0][i], c1[1][i], c2[0][i],
                                                          c2[1][i])]))
                for i in range(2)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    # every tree finds the second point violated: far less likely than a normal distribution
    # matched to the trees' moments says
    m, v = c1[0][1], c1[1][1]
    matched = norm.cdf(-m.mean() / np.sqrt(v.mean() + m.var()))
    assert np.exp(got[1]) < matched / 10


def _variant_scores(opt, points, **changes):
    """The study's OutcomeSearch, and its scores and a variant's of 200 random points, and the
    variant's scores of ``points``."""
    import dataclasses

    step = next(s for s in opt.proposer.steps if isinstance(s, OutcomeSearch))
    variant = dataclasses.replace(step, **changes)
    ctx = Context(opt.proposer, opt.study, opt.study.n_trials, np.random.default_rng(0))
    U = np.random.default_rng(1).random((200, 2))
    return step, step.scorer(ctx)(U), variant.scorer(ctx)(U), variant.scorer(ctx)(points)


def test_tree_feasibility_prefers_feasible_points_and_scores_finitely():
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, constraints=["c"])
    for _ in range(12):
        t = opt.ask()
        x, y = t.params["x"], t.params["y"]
        opt.tell(t, {"loss": (1 - x) ** 2 + y, "c": y - 0.5})
    step, moments, score, (good, bad) = _variant_scores(
        opt, np.array([[0.5, 0.1], [0.5, 0.95]]), feasibility="trees")
    assert step.feasibility == "moments"
    assert np.isfinite(score).all()
    assert good > bad
    # the objective's part is the same: the difference is the log probability of feasibility
    assert not np.array_equal(score, moments)


def test_below_the_feasibility_bound_every_point_ranks_after_those_above():
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, constraints=["c"])
    for _ in range(16):
        t = opt.ask()
        x, y = t.params["x"], t.params["y"]
        opt.tell(t, {"loss": (x - 0.2) ** 2 + y, "c": 0.3 - x})  # feasible where x >= 0.3
    step, plain, bounded, (inside, outside) = _variant_scores(
        opt, np.array([[0.9, 0.5], [0.05, 0.0]]), min_feasibility=0.5)
    assert step.min_feasibility == 0.0  # the default
    above = bounded == plain
    below = bounded < -1e5
    assert above.any() and below.any() and np.all(above | below)
    assert bounded[above].min() > bounded[below].max()
    # what a point below scores, less the constant, is its log-probability, under the bound
    assert np.all(bounded[below] + 1e6 < np.log(0.5))
    assert inside > -1e5 > outside
    # where the plain score prefers a point the constraint likely rules out, the bound does not
    assert plain[below].max() > plain[above].min()
    # before any feasible trial the probability alone is maximised, as without the bound
    first = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, constraints=["c"])
    for _ in range(8):
        t = first.ask()
        first.tell(t, {"loss": t.params["y"], "c": 1.0 + t.params["x"]})  # never feasible
    _, plain, bounded, _ = _variant_scores(first, np.zeros((1, 2)), min_feasibility=0.5)
    np.testing.assert_array_equal(plain, bounded)
    for bad in (-0.1, 1.0, True, "0.5", float("nan")):
        with pytest.raises(ValueError, match="min_feasibility"):
            OutcomeSearch(min_feasibility=bad)


def test_pareto_rank_counts_the_feasible_observations_that_dominate():
    from mfbo.proposal.steps.outcomes import _pareto_rank

    Y = np.array([[0.0, 1.0, -1.0], [1.0, 0.0, -1.0], [1.0, 1.0, -1.0], [2.0, 2.0, -1.0],
                  [-1.0, -1.0, 0.5], [3.0, 3.0, 2.0]])
    rank = _pareto_rank(Y, 2)
    # dominated by (feasible ones), less the share of the feasible ones dominated; the
    # infeasible point at (-1, -1) dominates nobody, and the infeasible ones come last
    assert rank[:4] == pytest.approx([-2 / 7, -2 / 7, 2 - 1 / 7, 3])
    assert rank[4] == 6.5 and rank[5] == 8.0
    assert _pareto_rank(Y[:, :2], 2)[:4] == pytest.approx([1 - 3 / 7, 1 - 3 / 7, 3 - 2 / 7,
                                                           4 - 1 / 7])


def test_the_parzen_slot_scores_only_points_of_the_fronts_density(monkeypatch):
    import mfbo.proposal.steps.parzen as parzen
    import mfbo.proposal.steps.search as search

    opt = _opt(directions=["minimize", "minimize"], constraints=["c"])
    seen = []

    def spy(name):
        def f(score, levels, **kwargs):
            extra = kwargs.get("extra")
            seen.append((name, kwargs["n_random"], None if extra is None else len(extra)))
            return np.random.default_rng(0).random((10, len(levels)))
        return f

    monkeypatch.setattr(search, "maximize_random_local", spy("search"))
    monkeypatch.setattr(parzen, "maximize_random_local", spy("parzen"))
    step = OutcomeSearch(n_random=2000, parzen_every=2, parzen_candidates=50, local_every=0)
    n0 = opt.proposer.n_initial
    for number in range(n0, n0 + 4):
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        step.propose(ctx)
    assert seen == [("search", 1000, None), ("parzen", 0, 50)] * 2
    # without the slot (the default) it is never taken
    seen.clear()
    for number in range(n0, n0 + 4):
        OutcomeSearch(n_random=2000, local_every=0).propose(
            Context(opt.proposer, opt.study, number, np.random.default_rng(0)))
    assert [s[0] for s in seen] == ["search"] * 4
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="parzen_every"):
            OutcomeSearch(parzen_every=bad)
    with pytest.raises(ValueError, match="parzen_candidates"):
        OutcomeSearch(parzen_candidates=0)


def test_parego_of_the_trees_draws_prefers_the_front_and_scores_finitely():
    opt = _opt(directions=["minimize", "minimize"], constraints=["c"], pareto_method="parego")
    step, bounds, score, (good, bad) = _variant_scores(
        opt, np.array([[0.5, 0.0], [0.5, 0.95]]), scalarise="draws")
    assert step.scalarise == "bounds"
    assert np.isfinite(score).all() and not np.array_equal(score, bounds)
    assert good > bad
    with pytest.raises(ValueError, match=r"scalarise=\.\.\.\) must be one of"):
        OutcomeSearch(scalarise="means")


def test_clipped_losses_raise_the_infeasible_losses_to_the_best_feasible_one():
    from mfbo.proposal.steps.outcomes import clipped_losses
    y = np.array([3.0, -5.0, 2.0, 1.0, 4.0])
    # the loss, one constraint, whether the trial failed (+1) or not (-1)
    Y = np.column_stack([y, [-1.0, 0.5, 0.0, 2.0, -0.1], [-1, -1, -1, -1, 1]])
    got, level = clipped_losses(y, Y)
    assert level == 2.0  # rows 0 and 2 are feasible (a value of 0 meets the constraint)
    assert got.tolist() == [3.0, 2.0, 2.0, 2.0, 4.0]
    assert y.tolist() == [3.0, -5.0, 2.0, 1.0, 4.0]  # untouched
    none, level = clipped_losses(y[1:2], Y[1:2])
    assert level is None and none.tolist() == [-5.0]


def _constrained_run(n, **kwargs):
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=1, constraints=["c"],
                    outcome_options={"infeasible_losses": "clipped"}, **kwargs)
    for _ in range(n):
        t = opt.ask()
        x, y = t.params["x"], t.params["y"]
        # lowest where infeasible (x + y > 1), best feasible on the line x + y = 1
        opt.tell(t, {"loss": -(x + y) ** 2, "c": x + y - 1.0})
    return opt


@pytest.mark.parametrize("setting", ["clipped", "observed"])
def test_the_objective_s_model_is_told_the_clipped_losses(monkeypatch, setting):
    from mfbo.proposal.models import MondrianModel
    from mfbo.proposal.steps.outcomes import clipped_losses
    told, changed = [], []
    observe = MondrianModel.observe
    calls = {"n": 0}

    def spy(self, X, y, n_new):
        if self is opt_model[0]:
            told.append(np.array(y))
        return observe(self, X, y, n_new)

    opt_model = [None]
    monkeypatch.setattr(MondrianModel, "observe", spy)
    monkeypatch.setattr(MondrianModel, "on_targets_changed",
                        lambda self: (changed.append(len(told)), setattr(self, "_retarget",
                                                                         True)))
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=1, constraints=["c"],
                    outcome_options={"infeasible_losses": setting})
    opt_model[0] = opt.proposer.model
    levels = []
    for _ in range(20):
        t = opt.ask()
        x, y = t.params["x"], t.params["y"]
        opt.tell(t, {"loss": -(x + y) ** 2, "c": x + y - 1.0})
        calls["n"] += 1
    obs = opt.study.obs
    assert len(told) == obs.n
    for i, y in enumerate(told):  # one at a time, each the prefix's losses as clipped then
        want, level = clipped_losses(obs.y[:i + 1], obs.Y[:i + 1])
        levels.append(level)
        np.testing.assert_array_equal(y, want if setting == "clipped" else obs.y[:i + 1])
    infeasible = obs.Y[:, 1] > 0
    assert infeasible.any() and (~infeasible).any()
    if setting == "clipped":
        assert told[-1][infeasible].min() >= told[-1][~infeasible].min()
        # told before each observation after which the level moved (not before the first)
        moved = [i for i in range(1, len(levels)) if levels[i] != levels[i - 1]
                 and levels[i - 1] is not None]
        assert moved and changed == moved
    else:
        assert not changed


def test_clipped_losses_resume_bit_identical_and_feed_the_liar(tmp_path):
    whole = _constrained_run(24)
    db = str(tmp_path / "s.db")
    clipped = {"infeasible_losses": "clipped"}
    first = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=1, constraints=["c"],
                      storage=db, outcome_options=clipped)
    for _ in range(15):
        t = first.ask()
        x, y = t.params["x"], t.params["y"]
        first.tell(t, {"loss": -(x + y) ** 2, "c": x + y - 1.0})
    first.close()
    second = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=1,
                       constraints=["c"], storage=db, outcome_options=clipped)
    for _ in range(9):
        t = second.ask()
        x, y = t.params["x"], t.params["y"]
        second.tell(t, {"loss": -(x + y) ** 2, "c": x + y - 1.0})
    assert [t.params for t in second.trials] == [t.params for t in whole.trials]
    # pending trials: the constant liar's copy is told the clipped losses, and the lie is
    # their least, the best feasible loss, not an infeasible trial's lower one
    whole.ask(2)
    lied, _ = whole.proposer.scoring_model(whole.study, None)
    y, level = whole.proposer.losses(whole.study)
    assert level is not None and y.min() == level
    assert whole.study.obs.y.min() < level  # an infeasible loss is lower
    np.testing.assert_array_equal(lied._aug[1][:y.size], y)
    assert lied._aug[1][y.size:].tolist() == [level, level]  # one lie per pending trial


def test_infeasible_losses_is_checked_and_old_proposers_tell_the_losses_as_they_are():
    import pickle
    with pytest.raises(ValueError, match=r"infeasible_losses=\.\.\.\) must be one of"):
        OutcomeSearch(infeasible_losses="dropped")
    # the default tells the losses as they are
    default = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=1, constraints=["c"])
    assert default.proposer.steps[-1].infeasible_losses == "observed"
    assert not default.proposer._clips
    opt = _constrained_run(14)
    proposer = pickle.loads(pickle.dumps(opt.proposer))
    del proposer.__dict__["_clips"]  # a proposer pickled before the setting existed
    proposer = pickle.loads(pickle.dumps(proposer))
    assert proposer._clips is False
    y, level = proposer.losses(opt.study)
    assert level is None
    np.testing.assert_array_equal(y, opt.study.obs.y)
    assert (y < opt.proposer.losses(opt.study)[0]).any()  # which the new one raises


def test_an_estimator_model_is_fitted_afresh_when_its_targets_changed():
    from mfbo.proposal.models.base import EstimatorModel

    class Online:
        def __init__(self):
            self.calls = []

        def fit(self, X, y):
            self.calls.append(("fit", len(y)))
            return self

        def partial_fit(self, X, y):
            self.calls.append(("partial_fit", len(y)))
            return self

        def predict(self, X, return_std=False):
            return np.zeros(len(X)), np.ones(len(X))
    est = Online()
    model = EstimatorModel(est)
    X = np.random.default_rng(0).random((4, 2))
    model.observe(X[:3], np.zeros(3), 3)
    model.observe(X, np.zeros(4), 1)
    model.on_targets_changed()
    model.observe(X, np.ones(4), 0 + 1)
    assert est.calls == [("fit", 3), ("partial_fit", 1), ("fit", 4)]
