"""TPE's choice as a step: the Parzen densities (normalised, sampled as they are defined,
blind to inactive coordinates) and the step's proposals (new, allowed, in the good region, at
the slots it is due)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
from scipy.stats import truncnorm

from mfbo import Categorical, Integer, Optimizer, Real
from mfbo.proposal import AcquisitionSearch, DensityRatioStep, get_recipe
from mfbo.proposal.steps.parzen import ParzenDensity


def test_a_continuous_mixture_integrates_to_one():
    X = np.array([[0.02], [0.3], [0.31], [0.97]])
    dens = ParzenDensity(X, np.array([0]))
    u = np.linspace(0.0, 1.0, 20_001)
    pdf = np.exp(dens.log_pdf(u[:, None]))
    assert np.trapezoid(pdf, u) == pytest.approx(1.0, abs=1e-4)


def test_a_categorical_mixture_sums_to_one_and_counts_the_observations():
    X = np.array([[0.1], [0.1], [0.5]])  # values 0, 0, 1 of 3
    dens = ParzenDensity(X, np.array([-3]))
    p = np.exp(dens.log_pdf(np.array([[1 / 6], [0.5], [5 / 6]])))
    assert p.sum() == pytest.approx(1.0)
    assert p == pytest.approx(np.array([2 + 1 / 3, 1 + 1 / 3, 1 / 3]) / 4)


def test_samples_follow_the_density():
    rng = np.random.default_rng(0)
    X = np.array([[0.1, 0.2], [0.15, 0.9], [0.8, 0.5]])
    dens = ParzenDensity(X, np.array([0, -4]))
    S = dens.sample(200_000, rng)
    assert ((S >= 0) & (S <= 1)).all()
    edges = np.linspace(0, 1, 11)
    hist, _ = np.histogram(S[:, 0], bins=edges)
    u = np.linspace(0, 1, 10_001)
    pdf = np.exp(dens.log_pdf(np.column_stack([u, np.full(u.size, 0.1)])) -
                 dens._log_pdf_1d(1, -4, np.array([0.1])))
    expected = [np.trapezoid(pdf[(u >= a) & (u <= b)], u[(u >= a) & (u <= b)])
                for a, b in zip(edges[:-1], edges[1:])]
    assert hist / S.shape[0] == pytest.approx(expected, abs=4e-3)
    cat = np.bincount(np.floor(S[:, 1] * 4).astype(int), minlength=4) / S.shape[0]
    levels = (np.arange(4) + 0.5) / 4
    p = np.exp([dens._log_pdf_1d(1, -4, np.array([v]))[0] for v in levels])
    assert cat == pytest.approx(p, abs=4e-3)


def test_inactive_coordinates_add_nothing_and_are_left_out_of_the_mixtures():
    X = np.array([[0.2, -0.5], [0.4, 0.7], [0.6, -0.5]])
    dens = ParzenDensity(X, np.array([0, 0]))
    assert dens.values[1].tolist() == [0.7]
    one = ParzenDensity(X[:, :1], np.array([0]))
    U = np.array([[0.3, -0.5], [0.9, -0.5]])
    assert dens.log_pdf(U) == pytest.approx(one.log_pdf(U[:, :1]))


def test_a_dimension_no_observation_holds_is_the_prior():
    dens = ParzenDensity(np.array([[-0.5]]), np.array([0]))
    u = np.array([[0.0], [0.5], [1.0]])
    ref = truncnorm.logpdf(u[:, 0], -0.5, 0.5, loc=0.5, scale=1.0)
    assert dens.log_pdf(u) == pytest.approx(ref)
    S = dens.sample(1000, np.random.default_rng(1))
    assert ((S >= 0) & (S <= 1)).all()


def recipe(every=1):
    steps = (DensityRatioStep(every=every), AcquisitionSearch(n_random=200))
    return dataclasses.replace(get_recipe("mondrian"), steps=steps, name=None)


SPACE = {"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0),
         "n": Integer(1, 10), "y": Real(0.0, 1.0, when={"kind": "b"})}


def loss(kind, x, n, y=0.5):
    return {"a": 0.5, "b": 0.0, "c": 2.0}[kind] + (x - 0.3) ** 2 + (n - 3) ** 2 / 50 + (
        (y - 0.7) ** 2)


def test_the_step_proposes_new_configurations_of_a_conditional_space_when_due():
    opt = Optimizer(SPACE, surrogate=recipe(every=2), random_state=3, n_initial=6)
    seen = set()
    for _ in range(40):
        t = opt.ask()
        key = tuple(sorted(t.params.items()))
        assert key not in seen
        seen.add(key)
        assert ("y" in t.params) == (t.params["kind"] == "b")
        opt.tell(t, loss(**t.params))
    origins = [t.origin for t in opt.trials[6:]]
    assert origins[1::2] == ["density-ratio"] * 17
    assert "density-ratio" not in origins[0::2]


def test_its_points_concentrate_where_the_good_observations_are():
    opt = Optimizer(SPACE, surrogate=recipe(), random_state=0, n_initial=12)
    for _ in range(60):
        t = opt.ask()
        opt.tell(t, loss(**t.params))
    late = [t.params for t in opt.trials[40:]]
    assert sum(p["kind"] == "b" for p in late) >= 12
    assert np.median([abs(p["x"] - 0.3) for p in late]) < 0.2


def test_it_passes_in_a_candidate_set_and_refuses_bad_settings():
    cands = [{"kind": k, "x": x, "n": 3} for k in "ac" for x in (0.1, 0.5, 0.9)] + [
        {"kind": "b", "x": 0.2, "n": 3, "y": 0.4}]
    opt = Optimizer(SPACE, surrogate=dataclasses.replace(recipe(), steps=(
        DensityRatioStep(every=1),)), random_state=0, n_initial=2, candidates=cands)
    for _ in range(5):
        t = opt.ask()
        opt.tell(t, loss(**t.params))
    assert {t.origin for t in opt.trials[2:]} == {"random"}
    with pytest.raises(ValueError, match=r"DensityRatioStep\(every=...\)"):
        DensityRatioStep(every=-1)
    with pytest.raises((TypeError, ValueError), match=r"DensityRatioStep\(n_candidates"):
        DensityRatioStep(n_candidates=0)


def test_a_pickled_optimizer_proposes_as_the_original():
    def more(opt, n):
        for _ in range(n):
            t = opt.ask()
            opt.tell(t, loss(**t.params))
        return opt
    whole = more(Optimizer(SPACE, surrogate=recipe(every=2), random_state=2, n_initial=5), 20)
    part = more(Optimizer(SPACE, surrogate=recipe(every=2), random_state=2, n_initial=5), 11)
    part = more(pickle.loads(pickle.dumps(part)), 9)
    assert [t.params for t in part.trials] == [t.params for t in whole.trials]


def test_runs_are_reproducible():
    def trace(seed):
        opt = Optimizer(SPACE, surrogate=recipe(every=2), random_state=seed, n_initial=5)
        for _ in range(15):
            t = opt.ask()
            opt.tell(t, loss(**t.params))
        return [t.params for t in opt.trials]
    assert trace(4) == trace(4)


def after_plateau(step):
    from mfbo.proposal import PlateauEscape

    steps = list(get_recipe("mondrian").steps)
    at = next(i for i, s in enumerate(steps) if isinstance(s, PlateauEscape)) + 1
    return dataclasses.replace(get_recipe("mondrian"),
                               steps=(*steps[:at], step, *steps[at:]))


def run(space, surrogate, f, n=24):
    opt = Optimizer(space, surrogate=surrogate, random_state=5, n_initial=6)
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    return [(t.params, t.origin) for t in opt.trials]


def test_only_conditional_passes_where_no_parameter_has_a_condition():
    flat = {"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0), "n": Integer(1, 10)}
    only = after_plateau(DensityRatioStep(every=2, only_conditional=True))
    default = run(flat, get_recipe("mondrian"), loss)
    assert run(flat, only, loss) == default
    assert "density-ratio" in {o for _, o in run(flat, after_plateau(
        DensityRatioStep(every=2)), loss)}


def test_only_conditional_proposes_as_the_plain_step_in_a_conditional_space():
    only = run(SPACE, after_plateau(DensityRatioStep(every=2, only_conditional=True)), loss)
    assert only == run(SPACE, after_plateau(DensityRatioStep(every=2)), loss)
    assert "density-ratio" in {o for _, o in only}
    with pytest.raises(TypeError, match=r"DensityRatioStep\(only_conditional=...\)"):
        DensityRatioStep(only_conditional=1)
