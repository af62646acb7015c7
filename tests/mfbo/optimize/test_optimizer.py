"""Ask/tell behaviour: online updates, candidates, discrete spaces, batches, failures, bad input."""

import math

import numpy as np
import pandas as pd
import pytest

import mfbo
from mfbo import Categorical, Integer, Optimizer, Real, StudyExhausted
from mfbo.proposal import AcquisitionSearch
from tests.mfbo.nearest_model import Nearest
from tests.support import SPACE, quad, run_trials as run


def test_tell_is_one_partial_fit_never_a_refit():
    opt = run(Optimizer(SPACE, random_state=0, n_random_candidates=256), quad, 8)
    forest = opt.model.forest
    calls = []
    orig_fit, orig_pf = forest.fit, forest.partial_fit
    forest.fit = lambda *a, **k: calls.append("fit") or orig_fit(*a, **k)
    forest.partial_fit = lambda X, y: calls.append(("pf", len(X))) or orig_pf(X, y)
    run(opt, quad, 4)
    assert calls == [("pf", 1)] * 4
    assert forest.n_samples_seen_ == 12


def test_reproducible_and_improves_over_initial_design():
    a = run(Optimizer(SPACE, random_state=3, n_initial=5, n_random_candidates=512), quad, 25)
    b = run(Optimizer(SPACE, random_state=3, n_initial=5, n_random_candidates=512), quad, 25)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    init_best = min(t.value for t in a.trials[:5])
    assert init_best > 0.3 and a.best_trial.value < 0.1


@pytest.mark.parametrize("surrogate", ["mondrian", "rf-smac", "random"])
def test_named_surrogates_run(surrogate):
    opt = run(Optimizer(SPACE, surrogate=surrogate, random_state=0, n_initial=4,
                        n_random_candidates=256), quad, 12)
    assert opt.n_finished == 12 and opt.best_trial.value < 1.0


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_custom_estimator_surrogate():
    from sklearn.gaussian_process import GaussianProcessRegressor
    opt = run(Optimizer(SPACE, surrogate=GaussianProcessRegressor(normalize_y=True),
                        acquisition="ei", random_state=0, n_initial=4, n_random_candidates=256),
              quad, 12)
    assert opt.best_trial.value < 0.2


def test_candidates_enumerated_exactly_without_repeats():
    rng = np.random.default_rng(0)
    cand = pd.DataFrame({"x": rng.uniform(-1, 1, 30), "y": rng.uniform(-1, 1, 30)})
    opt = Optimizer(SPACE, candidates=cand, random_state=0, n_initial=3)
    run(opt, quad, 30)
    rows = [t.candidate for t in opt.trials]
    assert sorted(rows) == list(range(30))
    for t in opt.trials:  # params are the exact candidate values
        assert t.params == {"x": cand.x[t.candidate], "y": cand.y[t.candidate]}
    with pytest.raises(StudyExhausted):
        opt.ask()


def test_candidates_best_found_quickly():
    rng = np.random.default_rng(1)
    C = rng.uniform(-1, 1, (2000, 2))
    opt = run(Optimizer(SPACE, candidates=C, random_state=1), quad, 30)
    exact = min(quad(*c) for c in C)
    assert opt.best_trial.value < exact + 0.01


def test_finite_discrete_space_never_repeats():
    space = {"a": Integer(0, 3), "b": Categorical(["p", "q", "r"])}
    f = lambda a, b: (a - 2) ** 2 + {"p": 1.0, "q": 0.0, "r": 2.0}[b]
    opt = run(Optimizer(space, random_state=0, n_initial=3), f, 12)
    keys = [(t.params["a"], t.params["b"]) for t in opt.trials]
    assert len(set(keys)) == 12
    with pytest.raises(StudyExhausted):
        opt.ask()


def test_mixed_space_no_duplicate_discrete_proposals():
    space = {"a": Integer(0, 2), "c": Categorical(["u", "v"]), "lr": Real(1e-3, 1.0, log=True)}
    f = lambda a, c, lr: a + (c == "u") + math.log10(lr) ** 2
    opt = run(Optimizer(space, random_state=0, n_initial=4, n_random_candidates=256), f, 20)
    assert len({tuple(t.params.values()) for t in opt.trials}) == 20
    for t in opt.trials:
        opt.space.validate(t.params)


@pytest.mark.parametrize("strategy", ["constant_liar", "thompson"])
def test_batch_ask_distinct_points(strategy):
    opt = run(Optimizer(SPACE, random_state=0, batch_strategy=strategy,
                        n_random_candidates=256), quad, 10)
    batch = opt.ask(8)
    assert len(batch) == 8 and len({tuple(t.params.values()) for t in batch}) == 8
    assert len(opt.pending) == 8
    for t in batch:
        opt.tell(t, quad(**t.params))
    assert opt.n_finished == 18


def test_constant_liar_does_not_touch_the_real_model():
    opt = run(Optimizer(SPACE, random_state=0, n_random_candidates=256), quad, 10)
    n = opt.model.forest.n_samples_seen_
    opt.ask(5)
    assert opt.model.forest.n_samples_seen_ == n


def test_failures_are_recorded_and_penalised():
    opt = Optimizer(SPACE, random_state=0, n_initial=3, n_random_candidates=256)
    outcomes = [1.0, float("nan"), ValueError("boom"), {"loss": 0.5, "acc": 0.9},
                {"loss": None, "acc": 1}, None, float("inf"), 10 ** 400, np.float32(0.25)]
    for out in outcomes:
        opt.tell(opt.ask(), out)
    states = [t.state for t in opt.trials]
    assert states == ["complete", "failed", "failed", "complete", "failed", "failed", "failed",
                      "failed", "complete"]
    assert "ValueError: boom" in opt.trials[2].error and "loss" in opt.trials[4].error
    assert "too large for a float" in opt.trials[7].error
    assert opt.trials[3].extra == {"acc": 0.9} and opt.trials[4].extra == {"acc": 1}
    # the surrogate saw the 3 successes and 6 failures at the worst value so far (1.0)
    assert opt.model.forest.n_samples_seen_ == 9
    ign = Optimizer(SPACE, random_state=0, n_initial=3, on_failure="ignore")
    for out in outcomes:
        ign.tell(ign.ask(), out)
    assert ign.model.forest.n_samples_seen_ == 3
    assert opt.best_trial.value == 0.25


@pytest.mark.parametrize("value, exc, match", [
    ({"score": 1.0}, ValueError, "no 'loss' key"),
    ((1.0, 2.0), TypeError, "tuple of 2 values.*pass directions"),
    ([1.0], TypeError, "list of 1 values"),
    (np.array([1.0, 2.0]), TypeError, r"array of shape \(2,\)"),
    ("text", TypeError, "'text'"),
    (True, TypeError, "True"),
    ({"loss": "1.0"}, TypeError, "'1.0'"),
])
def test_a_value_that_cannot_be_understood_is_refused_and_records_nothing(value, exc, match):
    opt = run(Optimizer(SPACE, random_state=0, n_initial=3), quad, 4)
    t = opt.ask()
    events = len(opt.storage.read("default", 0))
    with pytest.raises(exc, match=match):
        opt.tell(t, value)
    assert len(opt.storage.read("default", 0)) == events and opt.pending[0].id == t.id
    opt.tell(t, 1.0)
    assert opt.trials[t.id].state == "complete"


def test_extra_fields_json_cannot_encode_are_kept_as_text(tmp_path):
    # a tuple key and a circular reference used to crash tell (and every resume after it)
    opt = Optimizer(SPACE, random_state=0, storage=tmp_path / "s.db")
    loop = {"a": 1}
    loop["me"] = loop
    t = opt.ask()
    told = opt.tell(t, {"loss": 1.0, "pair": {(1, 2): 3}, "loop": loop, "arr": np.arange(2)})
    assert told.extra == {"pair": {"(1, 2)": 3}, "loop": {"a": 1, "me": "<circular reference>"},
                          "arr": [0, 1]}
    opt.close()
    again = Optimizer(SPACE, random_state=0, storage=tmp_path / "s.db")
    assert again.trials[0].extra == told.extra and again.trials[0].state == "complete"


def test_tell_params_dict_and_bad_input_leaves_state_unchanged():
    opt = run(Optimizer(SPACE, random_state=0, n_random_candidates=256), quad, 6)
    opt.tell({"x": 0.3, "y": -0.2}, 0.0)
    assert opt.best_trial.params == {"x": 0.3, "y": -0.2} and opt.n_trials == 7
    t = opt.ask()
    before = (opt.n_trials, opt.model.forest.n_samples_seen_, len(opt.storage.read("default", 0)))
    bad = [
        (lambda: opt.tell({"x": 0.1}, 1.0), ValueError, "missing"),
        (lambda: opt.tell({"x": 0.1, "y": 0.0, "z": 1}, 1.0), ValueError, "unknown"),
        (lambda: opt.tell({"x": 5.0, "y": 0.0}, 1.0), ValueError, "outside"),
        (lambda: opt.tell({"x": "a", "y": 0.0}, 1.0), TypeError, "'x'"),
        (lambda: opt.tell(99, 1.0), ValueError, "unknown trial"),
        (lambda: opt.tell(0, 1.0), ValueError, "already told"),
        (lambda: opt.tell("t", 1.0), TypeError, "trial"),
        (lambda: opt.tell(t, 1.0, start="now"), TypeError, "start"),
    ]
    for call, exc, match in bad:
        with pytest.raises(exc, match=match):
            call()
    after = (opt.n_trials, opt.model.forest.n_samples_seen_, len(opt.storage.read("default", 0)))
    assert before == after and opt.trials[t.id].state == "pending"


@pytest.mark.parametrize("kwargs, match", [
    ({"surrogate": "gp"}, "surrogate"), ({"acquisition": "foo"}, "acquisition"),
    ({"batch_strategy": "x"}, "batch_strategy"), ({"n_initial": 0}, "n_initial"),
    ({"on_failure": "x"}, "on_failure"), ({"initial_design": "grid"}, "initial_design"),
    ({"surrogate_options": {"bogus": 1}}, "surrogate_options"), ({"surrogate": object()}, "fit"),
    ({"candidates": np.zeros((3, 5))}, "shape"), ({"candidates": np.full((3, 2), 7.0)}, "outside"),
    ({"local_search": {"bogus": 1}}, "local_search"), ({"local_search": {"patience": 0}}, "patience"),
    ({"local_search": {"min_improvement": -1}}, "min_improvement"), ({"local_search": "yes"}, "local_search"),
    ({"local_search": {"search_patience": -2}}, "search_patience"),
])
def test_bad_optimizer_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Optimizer(SPACE, **kwargs)


def test_every_acquisition_runs():
    for acq in ("ucb", "ei", "logei", "pi", "thompson"):
        opt = run(Optimizer(SPACE, acquisition=acq, random_state=0, n_initial=4,
                            n_random_candidates=128), quad, 8)
        assert opt.n_finished == 8


def test_without_local_search():
    opt = run(Optimizer(SPACE, random_state=0, local_search=False, n_random_candidates=128),
              quad, 8)
    assert opt.n_finished == 8


def test_min_distance_keeps_proposals_apart():
    opt = run(Optimizer(SPACE, random_state=0, n_initial=4, min_distance=0.05,
                        n_random_candidates=256), quad, 20)
    U = np.array([t.unit for t in opt.trials])
    d = np.abs(U[:, None, :] - U[None, :, :]).max(axis=2) + np.eye(len(U))
    assert d[4:].min() >= 0.05 - 1e-12
    with pytest.raises(ValueError, match="min_distance"):
        Optimizer(SPACE, min_distance=2.0)


@pytest.mark.parametrize("transform", ["log", "smac-log", "rank", None])
def test_mondrian_output_transform_tracks_all_losses(transform):
    from mfbo.proposal.models import MondrianModel

    opt = Optimizer(SPACE, random_state=0, n_initial=4, n_random_candidates=256,
                    surrogate_options={"y_transform": transform})
    forest = opt.model.forest
    refits = []
    orig = forest.refit_targets
    forest.refit_targets = lambda y: refits.append(len(y)) or orig(y)
    run(opt, quad, 30)
    y = np.array([t.value for t in opt.trials])
    n = forest.n_samples_seen_
    # the forest holds every loss on the model's current scale
    np.testing.assert_allclose(forest._store.y[:n], opt.model._transform(y), atol=1e-9)
    if transform is None:
        assert refits == []
    else:  # re-derived only after a new best loss or a doubling of the data
        best = np.minimum.accumulate(y)
        new_best = sum(1 for i in range(1, 30) if y[i] < best[i - 1])
        assert 0 < len(refits) <= new_best + 5
    if transform == "log":  # log(y - c), c = min - 0.3 (median - min): shift- and scale-free
        rng = np.random.default_rng(0)
        X, yy = rng.random((20, 2)), 1.0 + rng.random(20)
        stored = []
        for offset, scale in ((0.0, 1.0), (1266.0, 1.0), (-3.0, 1e-3)):
            model = MondrianModel(2, 0)
            model.observe(X[:10], offset + scale * yy[:10], 10)
            model.observe(X, offset + scale * yy, 10)
            stored.append(model.forest._store.y[:20] - np.log(scale))
        c = yy.min() - 0.3 * (np.median(yy) - yy.min())
        for s in stored:
            np.testing.assert_allclose(s, np.log(yy - c), atol=1e-9)
        from mfbo.proposal.models import log_shift
        assert log_shift(np.array([1.0, 1.0, 1.0, 5.0])) == pytest.approx(4e-3)  # tied best
        assert 0 < log_shift(np.full(3, 7.0)) < 1e-9
    with pytest.raises(ValueError, match="y_transform"):
        MondrianModel(2, 0, y_transform="sqrt")


def test_alternating_posterior_takes_turns_on_one_forest():
    """posterior="alternating" predicts as the empirical posterior from an even number of
    observations and as BP from an odd number, on the forest both would have grown."""
    from mfbo.proposal.models import MondrianModel

    rng = np.random.default_rng(3)
    X, y = rng.random((25, 2)), rng.random(25)
    Q = rng.random((40, 2))
    models = {p: MondrianModel(2, 7, posterior=p) for p in ("alternating", "empirical", "bp")}
    for n in (11, 12, 19, 20, 25):
        for model in models.values():
            model.observe(X[:n], y[:n], n - model._n)
        turn = models["bp" if n % 2 else "empirical"]
        for a, b in zip(models["alternating"].predict(Q), turn.predict(Q)):
            np.testing.assert_array_equal(a, b)
        for a, b in zip(models["alternating"].predict_per_tree(Q), turn.predict_per_tree(Q)):
            np.testing.assert_array_equal(a, b)
    other = models["empirical" if 25 % 2 else "bp"].predict(Q)[0]
    assert not np.array_equal(models["alternating"].predict(Q)[0], other)
    with pytest.raises(ValueError, match="posterior"):
        MondrianModel(2, 0, posterior="mixed")


@pytest.mark.parametrize("posterior, n", [("empirical", 15), ("alternating", 16), ("bp", 15),
                                          ("alternating", 15)])
def test_acquisition_std_excludes_observation_noise_by_default(posterior, n):
    opt = run(Optimizer(SPACE, random_state=1, n_initial=4, n_random_candidates=256,
                        surrogate_options={"posterior": posterior}), quad, n)
    m = opt.model
    X = opt._obs.X
    _, s_latent = m.predict(X)  # (sets the forest's posterior of this turn)
    _, s_full = m.forest.predict(X, return_std=True)
    s2 = m.forest.hyperparameters_["noise_var"]
    np.testing.assert_allclose(s_latent ** 2, np.maximum(s_full ** 2 - s2, 0), atol=1e-12)
    if m.forest.posterior == "empirical":
        # at an evaluated point every tree predicts its own leaf: no spread, no exploration
        # bonus (BP smooths the leaves: its latent mean there is uncertain)
        assert s_latent.max() < 1e-6 < s2
    else:
        assert s_latent.max() > 1e-6 and s2 > 0
    m.noise_in_std = True
    np.testing.assert_allclose(m.predict(X)[1], s_full)


def test_surrogate_chooses_the_random_candidate_count_and_local_search():
    mond = Optimizer(SPACE, random_state=0)
    smac = Optimizer(SPACE, surrogate="rf-smac", random_state=0)
    assert mond.n_random_candidates == 2000 and smac.n_random_candidates == 10_000
    assert mond.recipe.step(AcquisitionSearch).patience < smac.recipe.step(AcquisitionSearch).patience
    assert Optimizer(SPACE, n_random_candidates=64).n_random_candidates == 64
    smac_like = run(Optimizer(SPACE, random_state=0, n_initial=4, n_random_candidates=64,
                              local_search={"patience": 10, "min_improvement": 0.0}), quad, 8)
    assert smac_like.n_finished == 8
    for bad in (0, True, 2.5):
        with pytest.raises(ValueError, match="n_random_candidates"):
            Optimizer(SPACE, n_random_candidates=bad)


def test_observation_buffers_follow_the_journal():
    """The arrays handed to the surrogate and to the maximiser grow with the study (past
    their first capacity) and hold exactly the trials' unit points and losses."""
    opt = Optimizer(SPACE, random_state=0, n_initial=5, n_random_candidates=64)
    for i in range(40):
        t = opt.ask()
        opt.tell(t, ValueError("x") if i % 7 == 3 else quad(**t.params))
    units = np.array([t.unit for t in opt.trials])
    np.testing.assert_array_equal(opt._asked.X, units)
    worst = []  # a failure is fed as the worst loss so far
    for t in opt.trials:
        worst.append(t.value if t.state == "complete" else max(worst))
    np.testing.assert_array_equal(opt._obs.X, units)
    np.testing.assert_array_equal(opt._obs.y, worst)
    assert opt.model.forest.n_samples_seen_ == 40


def test_a_registered_model_subclass_is_used_by_name():
    mfbo.register_surrogate("nearest", Nearest)
    opt = mfbo.Optimizer({"x": (0.0, 1.0)}, surrogate="nearest", random_state=0,
                         surrogate_options={"scale": 2.0})
    assert isinstance(opt.model, Nearest) and opt.model.scale == 2.0
    for _ in range(12):
        t = opt.ask()
        opt.tell(t, (t.params["x"] - 0.3) ** 2)
    assert "nearest" in mfbo.SURROGATES and opt.best_trial.value < 0.01
    with pytest.raises(TypeError):
        mfbo.SURROGATES["other"] = Nearest  # read-only: register_surrogate is the way
    with pytest.raises(ValueError, match="built-in"):
        mfbo.register_surrogate("mondrian", Nearest)


def test_an_optimizer_in_memory_pickles_and_goes_on(tmp_path):
    import pickle

    opt = run(Optimizer(SPACE, random_state=0, n_initial=4, n_random_candidates=256), quad, 9)
    pending = opt.ask()
    twin = pickle.loads(pickle.dumps(opt))
    assert twin.study.owner != opt.study.owner  # a new handle on a copy of the journal
    assert [(t.id, t.params, t.value, t.state) for t in twin.trials] == \
        [(t.id, t.params, t.value, t.state) for t in opt.trials]
    for o in (opt, twin):
        o.tell(pending.id, quad(**pending.params))
    a, b = run(opt, quad, 5), run(twin, quad, 5)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    twin.tell(twin.ask(), 0.0)  # the copy is independent of the original
    assert (opt.n_finished, twin.n_finished) == (15, 16)
    stored = Optimizer(SPACE, storage=tmp_path / "s.db", study_name="kept")
    with pytest.raises(TypeError, match="SQLiteStorage.*study_name='kept'"):
        pickle.dumps(stored)
    stored.close()
