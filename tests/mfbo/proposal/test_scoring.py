"""The recipe's plateau weight: UCB's kappa once a loss has repeated exactly."""

import dataclasses
import pickle

import numpy as np
import pytest

import mfbo
from mfbo.proposal import PlateauEscape
from tests.support import quad, run_trials as _run, stepped_quad as _stepped

SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _recipe(plateau_kappa, escape=True):
    recipe = mfbo.get_recipe("mondrian")
    recipe = dataclasses.replace(recipe, acquisition=dataclasses.replace(
        recipe.acquisition, plateau_kappa=plateau_kappa))
    return recipe if escape else recipe.without(PlateauEscape)


@pytest.mark.parametrize("bad, exc", [(-1.0, ValueError), (float("nan"), ValueError),
                                      (float("inf"), ValueError), (True, TypeError),
                                      ("2", TypeError), ((2.0, 1.0), TypeError)])
def test_recipe_refuses_a_bad_plateau_kappa(bad, exc):
    with pytest.raises(exc, match="plateau_kappa"):
        _recipe(bad)


def test_plateau_kappa_is_kept_as_a_float_and_pickles():
    assert mfbo.get_recipe("mondrian").acquisition.plateau_kappa is None
    recipe = _recipe(2)
    kappa = recipe.acquisition.plateau_kappa
    assert kappa == 2.0 and isinstance(kappa, float)
    assert pickle.loads(pickle.dumps(recipe)) == recipe


def test_the_study_knows_when_a_loss_has_repeated(tmp_path):
    path = str(tmp_path / "s.db")
    opt = mfbo.Optimizer(SPACE, random_state=0, n_initial=3, storage=path)
    seen = []
    for v in (3.0, 1.0, 2.0, 1.5):
        opt.tell(opt.ask(), v)
        seen.append(opt.study.loss_repeated)
    # failed trials (imputed with the worst loss) are not repeats of it
    opt.tell(opt.ask(), float("nan"))
    opt.tell(opt.ask(), RuntimeError("boom"))
    seen.append(opt.study.loss_repeated)
    opt.tell(opt.ask(), 2.0)
    seen.append(opt.study.loss_repeated)
    assert seen == [False] * 5 + [True]
    # the state is replayed from the journal
    opt.close()
    assert mfbo.Optimizer(SPACE, random_state=0, n_initial=3, storage=path).study.loss_repeated


def test_maximised_values_repeat_alike():
    opt = mfbo.Optimizer(SPACE, random_state=0, n_initial=3, direction="maximize")
    for v in (0.5, 0.75):
        opt.tell(opt.ask(), v)
    assert not opt.study.loss_repeated
    opt.tell(opt.ask(), 0.75)
    assert opt.study.loss_repeated


def test_the_weight_is_kappa_until_a_loss_repeats_then_the_plateau_weight():
    opt = mfbo.Optimizer(SPACE, surrogate=_recipe(5.0), kappa=(3.0, 0.5), random_state=0)
    proposer = opt.proposer
    # UCB = kappa * std - mean: at mean 0 and std 1 the score is the weight itself
    weights = [float(proposer.acquisition_for(n, repeated)([0.0], [1.0])[0])
               for repeated in (False, True) for n in range(3)]
    assert weights == [3.0, 0.5, 3.0, 5.0, 5.0, 5.0]
    plain = mfbo.Optimizer(SPACE, kappa=3.0, random_state=0).proposer
    assert float(plain.acquisition_for(4, True)([0.0], [1.0])[0]) == 3.0  # no plateau weight


def test_without_repeats_nothing_changes():
    # a continuous loss never repeats: the same trials as the default recipe
    runs = [_run(mfbo.Optimizer(SPACE, surrogate=r, random_state=2), quad, 30)
            for r in (mfbo.get_recipe("mondrian"), _recipe(4.0))]
    assert not runs[1].study.loss_repeated
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_after_a_repeat_each_proposal_is_the_plateau_weights():
    """Every proposal is the one kappa 1 (before the first repeat) or kappa 4 (after it) makes
    from the same observations (same seed, hence the same proposal stream)."""
    opt = _run(mfbo.Optimizer(SPACE, surrogate=_recipe(4.0, escape=False), random_state=5,
                              n_initial=4), _stepped, 16)
    params = [t.params for t in opt.trials]
    values = [t.value for t in opt.trials]
    first_repeat = next(i for i, v in enumerate(values) if v in values[:i])
    assert 4 <= first_repeat < 14  # the stepped loss repeats after the initial design
    for n in range(4, 16):
        kappa = 4.0 if n > first_repeat else 1.0
        alone = mfbo.Optimizer(SPACE, surrogate=_recipe(None, escape=False),
                               kappa=kappa, random_state=5, n_initial=4)
        alone.enqueue(params[:n])
        for v in values[:n]:
            alone.tell(alone.ask(), v)
        assert alone.ask().params == params[n], n
    # and the plateau weight does change the proposals after the repeat
    plain = _run(mfbo.Optimizer(SPACE, surrogate=_recipe(None, escape=False),
                                random_state=5, n_initial=4), _stepped, 16)
    assert [t.params for t in plain.trials][:first_repeat + 1] == params[:first_repeat + 1]
    assert [t.params for t in plain.trials] != params
