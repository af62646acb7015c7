"""mfbo's own methods: each runs the surrogate and recipe its name says."""

import dataclasses

import numpy as np
import pytest

from benchmarks.harness import bench, methods


def test_bart_method_runs_the_bart_surrogate(tmp_path):
    assert methods.optimizer_settings("bart")["surrogate"] == "bart"
    (rec,) = bench.run("branin", "bart", budget=12, seeds=1, out=tmp_path / "b.jsonl",
                       progress=False)
    assert rec["method"] == "bart" and rec["n_evals"] == 12
    assert all(np.isfinite(rec["values"])) and rec["best"] == min(rec["values"])


@pytest.mark.parametrize("method, posterior", [("mondrian-bp", "bp"),
                                               ("mondrian-empirical", "empirical"),
                                               ("mondrian", "alternating")])
def test_mondrian_methods_run_their_posterior(tmp_path, monkeypatch, method, posterior):
    import mfbo.proposal.models

    made = []
    real = mfbo.proposal.models.MondrianModel.__init__

    def init(self, *args, **kwargs):
        made.append(kwargs.get("posterior"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(mfbo.proposal.models.MondrianModel, "__init__", init)
    (rec,) = bench.run("branin", method, budget=14, seeds=1, out=tmp_path / "b.jsonl",
                       progress=False)
    assert made == [posterior] and rec["n_evals"] == 14 and rec["best"] == min(rec["values"])


def test_the_kappa_cycle_method_is_the_default_recipe_with_kappa_2_then_1(tmp_path):
    from mfbo.proposal.recipes import get_recipe

    settings = methods.optimizer_settings("mondrian-kappa21")
    recipe = get_recipe("mondrian")
    assert settings["surrogate"] == dataclasses.replace(
        recipe, acquisition=dataclasses.replace(recipe.acquisition, kappa=(2.0, 1.0)))
    assert settings["acquisition"] is None and "kappa" not in settings  # the recipe's cycle
    (rec,) = bench.run("branin", "mondrian-kappa21", budget=14, seeds=1,
                       out=tmp_path / "k.jsonl", progress=False)
    assert rec["n_evals"] == 14 and rec["best"] == min(rec["values"])


def test_the_plateau_kappa_method_is_the_default_recipe_with_plateau_kappa_2(tmp_path):
    from mfbo.proposal.recipes import get_recipe

    settings = methods.optimizer_settings("mondrian-plateaukappa2")
    recipe = get_recipe("mondrian")
    assert settings["surrogate"] == dataclasses.replace(
        recipe, acquisition=dataclasses.replace(recipe.acquisition, plateau_kappa=2.0))
    # Branin's loss never repeats: the run is the default's, evaluation for evaluation
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-plateaukappa2")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_repeat_raw_method_switches_the_default_forest_to_raw_losses(tmp_path):
    settings = methods.optimizer_settings("mondrian-repeatraw")
    assert settings["surrogate"] == "mondrian"
    assert settings["surrogate_options"] == {"repeat_y_transform": "raw"}
    # Branin's loss never repeats: the run is the default's, evaluation for evaluation
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-repeatraw")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_noparzen_method_is_the_default_recipe_without_parzen_steps(tmp_path):
    from mfbo.proposal import ParzenStep, get_recipe

    settings = methods.optimizer_settings("mondrian-noparzen")
    assert settings["surrogate"] == get_recipe("mondrian").without(ParzenStep)
    # the same initial design and first model-based proposal as the default, then its own
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-noparzen")]
    n0 = min(5 * 2, 14 // 4)  # minimize's initial design at 14 calls (D = 2)
    assert runs[0]["values"][:n0 + 1] == runs[1]["values"][:n0 + 1]
    assert runs[0]["values"][n0 + 1] != runs[1]["values"][n0 + 1]


def test_the_noconvparzen_method_is_the_default_without_parzen_steps_when_converged(
        tmp_path):
    from mfbo.proposal import ParzenStep, get_recipe

    recipe = get_recipe("mondrian")
    assert recipe.step(ParzenStep).when_converged
    settings = methods.optimizer_settings("mondrian-noconvparzen")
    assert settings["surrogate"] == recipe.with_step(
        dataclasses.replace(recipe.step(ParzenStep), when_converged=False))
    # on Branin at 14 evaluations no local step has converged: the default's run
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-noconvparzen")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_condratio_methods_are_the_ratio_methods_only_in_conditional_spaces(tmp_path):
    from mfbo.proposal import DensityRatioStep

    for k in (2, 3, 4, 6):
        plain = methods.optimizer_settings(f"mondrian-ratio{k}")["surrogate"]
        cond = methods.optimizer_settings(f"mondrian-condratio{k}")["surrogate"]
        assert cond == plain.with_step(DensityRatioStep(every=k, only_conditional=True))
    # Branin has no conditional parameter: the default's run, evaluation for evaluation
    runs = [bench.run("branin", m, budget=14, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-condratio2")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_per_parameter_methods_change_only_those_settings_and_no_flat_run(tmp_path):
    from mfbo.proposal import BranchBandit, ParzenStep, get_recipe

    default = get_recipe("mondrian")
    for name, bandit, parzen, nested in (("mondrian-bandit-pp", True, False, False),
                                         ("mondrian-nested-bandit-pp", True, False, True),
                                         ("mondrian-parzen-pp", False, True, False),
                                         ("mondrian-nested-pp", True, True, True)):
        recipe = methods.optimizer_settings(name)["surrogate"]
        assert recipe == default.with_settings(
            BranchBandit, per_parameter=bandit, nested=nested).with_settings(
            ParzenStep, per_parameter=parzen)
    # Branin has no conditional parameter: the default's run, evaluation for evaluation
    runs = [bench.run("branin", m, budget=16, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-nested-pp")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_earned_and_burst_methods_change_only_those_settings_and_no_flat_run(tmp_path):
    from mfbo.proposal import BranchBandit, get_recipe

    default = get_recipe("mondrian")
    for name, settings in (
            ("mondrian-bandit-ppe", dict(per_parameter="earned")),
            ("mondrian-nested-bandit-ppe", dict(nested=True, per_parameter="earned")),
            ("mondrian-nested-bandit-ppe25", dict(nested=True, per_parameter="earned",
                                                  earn_quantile=0.25)),
            ("mondrian-bandit-ppe1", dict(per_parameter="earned", earn_quantile=0.1)),
            ("mondrian-bandit-burst3", dict(burst=3)),
            ("mondrian-nested-bandit-burst3p", dict(nested=True, burst=3, refine="parzen")),
            ("mondrian-nested-bandit-ppe-burst5", dict(nested=True, per_parameter="earned",
                                                       burst=5))):
        recipe = methods.optimizer_settings(name)["surrogate"]
        assert recipe == default.with_settings(BranchBandit, **settings)
    # Branin has no conditional parameter: the default's run, evaluation for evaluation
    runs = [bench.run("branin", m, budget=16, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0]
            for m in ("mondrian", "mondrian-nested-bandit-ppe-burst3")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_leaf_methods_change_only_those_settings_and_no_flat_run(tmp_path):
    from mfbo.proposal import BranchBandit, get_recipe

    default = get_recipe("mondrian")
    for name, settings in (
            ("mondrian-nested-bandit-leaf", dict(nested="leaf", per_parameter="leaf")),
            ("mondrian-nested-bandit-leafnest", dict(nested="leaf")),
            ("mondrian-nested-bandit-leafpp", dict(nested=True, per_parameter="leaf")),
            ("mondrian-bandit-leafpp", dict(per_parameter="leaf"))):
        recipe = methods.optimizer_settings(name)["surrogate"]
        assert recipe == default.with_settings(BranchBandit, **settings)
        assert recipe.step(BranchBandit).leaf_size == 2
    # Branin has no conditional parameter: the default's run, evaluation for evaluation
    runs = [bench.run("branin", m, budget=16, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-nested-bandit-leaf")]
    assert runs[0]["values"] == runs[1]["values"]


def test_the_cooldown_methods_change_only_that_setting_and_no_flat_run(tmp_path):
    from mfbo.proposal import BranchBandit, get_recipe

    default = get_recipe("mondrian")
    for k in (1, 2, 5):
        recipe = methods.optimizer_settings(f"mondrian-bandit-cool{k}")["surrogate"]
        assert recipe == default.with_settings(BranchBandit, cooldown=k)
    # Branin has no conditional parameter: the default's run, evaluation for evaluation
    runs = [bench.run("branin", m, budget=16, seeds=1, out=tmp_path / f"{m}.jsonl",
                      progress=False)[0] for m in ("mondrian", "mondrian-bandit-cool2")]
    assert runs[0]["values"] == runs[1]["values"]


@pytest.mark.parametrize("method, steps", [
    ("mondrian-exchange4", lambda d, e: (*d[:2], e, *d[2:])),
    ("mondrian-exchange4-flat", lambda d, e: (*d[:2], e, *d[2:])),
    ("mondrian-exchange4-noplateau", lambda d, e: (d[0], e, *d[2:]))])
def test_the_exchange_methods_put_the_stall_escape_into_the_default_recipe(method, steps):
    # the default before its own exchange escape, mondrian-noexchange
    from mfbo.proposal.recipes import get_recipe
    from mfbo.proposal.steps import PlateauEscape, StallEscape

    default = get_recipe("mondrian").without(StallEscape)
    assert methods.optimizer_settings("mondrian-noexchange")["surrogate"] == default
    escape = StallEscape(window=4, move="exchange", conditional=not method.endswith("flat"))
    recipe = methods.optimizer_settings(method)["surrogate"]
    assert recipe == dataclasses.replace(default, steps=steps(default.steps, escape))
    assert (recipe.step(PlateauEscape) is None) == method.endswith("noplateau")


def test_the_capped_novel_exchange_method_is_the_default():
    from mfbo.proposal.recipes import get_recipe

    recipe = methods.optimizer_settings("mondrian-catexchange4-novel-max1")["surrogate"]
    assert recipe == get_recipe("mondrian")
