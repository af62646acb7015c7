"""The Mondrian model's output transform once a loss has repeated (``repeat_y_transform``)."""

import pickle

import numpy as np
import pytest

import mfbo
from mfbo.proposal import InitialDesign
from mfbo.proposal.models import MondrianModel
from tests.support import quad, run_trials as _run, stepped_quad as _stepped

SPACE = mfbo.Space({"x": mfbo.Real(-1.0, 1.0), "y": mfbo.Real(-1.0, 1.0)})


def _opt(options=None, **kw):
    return mfbo.Optimizer(SPACE, random_state=kw.pop("random_state", 5),
                          surrogate_options=options, **kw)


@pytest.mark.parametrize("name", ["y_transform", "repeat_y_transform"])
@pytest.mark.parametrize("bad", ["LOG", "identity", 1, True, ("log",)])
def test_bad_transforms_name_the_argument(name, bad):
    with pytest.raises(ValueError, match=name):
        MondrianModel(2, 0, **{name: bad})


def test_raw_is_a_name_for_untransformed_losses():
    runs = [_run(_opt({"y_transform": t}, random_state=1), quad, 25) for t in (None, "raw")]
    assert runs[1].proposer.model.y_transform is None
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_without_repeats_nothing_changes():
    runs = [_run(_opt(o, random_state=2), quad, 30) for o in (None, {"repeat_y_transform": "raw"})]
    assert not runs[1].study.loss_repeated
    assert runs[1].proposer.model.y_transform == "log"
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]


def test_after_a_repeat_each_proposal_is_the_new_transforms():
    """Before the first repeat every proposal is the log transform's, after it the one raw
    losses make from the same observations (the forest's partitions do not depend on the
    losses, so switching mid-study gives the forest raw losses from the start would)."""
    opt = _run(_opt({"repeat_y_transform": "raw"}, n_initial=4), _stepped, 16)
    assert opt.proposer.model.y_transform is None
    params = [t.params for t in opt.trials]
    values = [t.value for t in opt.trials]
    first_repeat = next(i for i, v in enumerate(values) if v in values[:i])
    assert 4 <= first_repeat < 14
    for n in range(4, 16):
        alone = _opt({"y_transform": None if n > first_repeat else "log"}, n_initial=4)
        alone.enqueue(params[:n])
        for v in values[:n]:
            alone.tell(alone.ask(), v)
        assert alone.ask().params == params[n], n
    # and the switch does change the proposals after the repeat
    plain = _run(_opt(n_initial=4), _stepped, 16)
    assert [t.params for t in plain.trials][:first_repeat + 1] == params[:first_repeat + 1]
    assert [t.params for t in plain.trials] != params


def test_the_switched_forest_predicts_as_one_grown_on_the_new_targets():
    rng = np.random.default_rng(0)
    X = rng.random((40, 3))
    y = np.round(X.sum(axis=1), 1)  # repeats
    switched = MondrianModel(3, 7, repeat_y_transform="rank")
    switched.observe(X[:20], y[:20], 20)
    switched.on_repeated_loss()
    switched.observe(X, y, 20)
    direct = MondrianModel(3, 7, y_transform="rank")
    direct.observe(X[:20], y[:20], 20)
    direct.observe(X, y, 20)
    U = rng.random((50, 3))
    for a, b in zip(switched.predict(U), direct.predict(U)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # once only: a second call changes nothing
    switched.on_repeated_loss()
    assert switched.y_transform == "rank"


def test_failed_trials_do_not_switch_it():
    opt = _opt({"repeat_y_transform": "raw"}, n_initial=3)
    for v in (3.0, 1.0, float("nan"), float("nan"), 2.0):
        opt.tell(opt.ask(), v)
    opt.ask()
    assert opt.proposer.model.y_transform == "log"
    opt.tell(opt.ask(), 1.0)
    opt.ask()
    assert opt.proposer.model.y_transform is None


def test_a_pickled_optimizer_keeps_it():
    opt = _run(_opt({"repeat_y_transform": "raw"}, n_initial=4), _stepped, 12)
    opt.ask()
    copy = pickle.loads(pickle.dumps(opt))
    assert copy.proposer.model.y_transform is None
    assert copy.ask().params == opt.ask().params


def test_a_resumed_study_switches_too(tmp_path):
    path = str(tmp_path / "s.db")
    opt = _run(_opt({"repeat_y_transform": "raw"}, n_initial=4, storage=path), _stepped, 12)
    assert opt.study.loss_repeated
    opt.close()
    resumed = _opt({"repeat_y_transform": "raw"}, n_initial=4, storage=path)
    resumed.ask()
    assert resumed.proposer.model.y_transform is None


class _DuckModel:
    """A model of its own that does not subclass Model (no on_repeated_loss)."""

    is_informative = True

    def __init__(self, n_dims, random_state):
        self.n = 0

    def observe(self, X, y, n_new):
        self.n = X.shape[0]

    @property
    def ready(self):
        return self.n > 0

    def predict(self, X):
        return np.zeros(len(X)), np.ones(len(X))

    def incumbent(self, y):
        return float(np.min(y))


def test_a_model_without_the_hook_runs_through_repeats():
    recipe = mfbo.Recipe(model=_DuckModel, initial_design=InitialDesign(size=3))
    opt = _run(mfbo.Optimizer(SPACE, surrogate=recipe, random_state=0), _stepped, 10)
    assert opt.study.loss_repeated and opt.proposer.model.n == 10
