"""How categorical coordinates enter the Mondrian model's forest (``categorical=``): the
one-hot columns by hand, inactive and two-choice coordinates, the forest grown on them, the
spread at a choice never observed, pickling, constant liars, several outcomes predicted
together, a resumed study, and bad input."""

import pickle

import numpy as np
import pytest

import mfbo
from mfbo.proposal.models import MondrianModel
from mfbo.proposal.steps.outcomes import OutcomeModels
from tests.support import run_trials

LEVELS = np.array([0, -4, -2, 3])  # a real, four choices, two choices, an integer


def _model(categorical, levels=LEVELS, seed=0, **kw):
    m = MondrianModel(len(levels), seed, categorical=categorical, y_transform=None, **kw)
    m.set_levels(levels)
    return m


def _feed(model, X, y):
    for i in range(1, len(y) + 1):
        model.observe(X[:i], y[:i], 1)
    return model


def _data(n=30, seed=0, missing=None):
    rng = np.random.default_rng(seed)
    choice = rng.integers(0, 4, n)
    if missing is not None:
        choice[choice == missing] = (missing + 1) % 4
    X = np.c_[rng.random(n), (choice + 0.5) / 4, (rng.integers(0, 2, n) + 0.5) / 2,
              (rng.integers(0, 3, n) + 0.5) / 3]
    y = np.array([1.0, 2.0, 3.0, 4.0])[choice] + 0.1 * X[:, 0] + 0.01 * rng.random(n)
    return X, y


def test_one_hot_columns_by_hand():
    X = np.array([[0.3, 0.125, 0.25, 0.5],   # choice 0
                  [0.7, 0.875, 0.75, 1 / 6],  # choice 3
                  [0.1, 0.6, 0.25, 0.5],     # choice 2 (anywhere in its quarter)
                  [0.2, -0.5, -0.5, 0.5]])   # inactive (outside the cube)
    wide = _model("one-hot").encode(X)
    # the real, the two-choice and the integer coordinate first, as they are
    assert np.array_equal(wide[:, :3], X[:, [0, 2, 3]])
    assert np.array_equal(wide[:, 3:], [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 0, 0]])
    narrow = _model("one-hot-narrow").encode(X)
    assert np.array_equal(narrow[:, 3:], wide[:, 3:] / 4)
    assert _model("one-hot").forest.feature_bounds == [[0.0, 1.0]] * 7


def test_ordinal_and_spaces_without_wide_choices_are_left_as_they_are():
    X, _ = _data()
    assert _model("ordinal").encode(X) is not None
    assert np.array_equal(_model("ordinal").encode(X), X)
    m = _model("one-hot", levels=np.array([0, -2, 3, 0]))
    assert m._one_hot is None and np.array_equal(m.encode(X), X)


def test_the_model_is_one_told_the_one_hot_columns():
    X, y = _data()
    m = _feed(_model("one-hot"), X, y)
    plain = _feed(_model("ordinal", levels=np.zeros(7, dtype=int)), m.encode(X), y)
    Xq, _ = _data(8, seed=1)
    for got, expected in zip(m.predict(Xq), plain.predict(m.encode(Xq))):
        assert np.array_equal(got, expected)
    for got, expected in zip(m.predict_per_tree(Xq), plain.predict_per_tree(m.encode(Xq))):
        assert np.array_equal(got, expected)


def test_a_choice_never_observed_stands_out_by_its_spread():
    X, y = _data(40, missing=2)
    Xq = np.array([[0.5, (k + 0.5) / 4, 0.25, 0.5] for k in range(4)])

    def spread_ratio(categorical):  # the unseen choice's std over the others' mean std
        stds = np.mean([_feed(_model(categorical, seed=s), X, y).predict(Xq)[1]
                        for s in range(4)], axis=0)
        assert np.argmax(stds) == 2, (categorical, stds)
        return stds[2] / np.delete(stds, 2).mean()

    assert spread_ratio("one-hot") > 5 * spread_ratio("ordinal")
    spread_ratio("one-hot-narrow")


def test_pickled_and_lied_to_models():
    X, y = _data()
    m = _feed(_model("one-hot"), X, y)
    Xq, _ = _data(6, seed=2)
    copy = pickle.loads(pickle.dumps(m))
    assert np.array_equal(copy.predict(Xq)[0], m.predict(Xq)[0])
    before = m.predict(Xq)
    lied = m.with_lies(X, y, Xq[:1], 0.0)
    assert not np.array_equal(lied.predict(Xq)[0], before[0])
    assert np.array_equal(m.predict(Xq)[0], before[0])  # the original untouched


def test_several_outcomes_are_predicted_together_as_each_alone():
    X, y = _data()
    models = [_feed(_model("one-hot", posterior="empirical"), X, y),
              _feed(_model("one-hot", posterior="empirical"), X, -y)]
    joint = OutcomeModels(models)
    assert joint._shared is not None
    Xq, _ = _data(9, seed=3)
    for (m, s), model in zip(joint.predict(Xq), models):
        am, ast = model.predict(Xq)
        assert np.allclose(m, am) and np.allclose(s, ast)


SPACE = mfbo.Space({"x": mfbo.Real(-2.0, 2.0), "kind": mfbo.Categorical(list("abcde")),
                    "n": mfbo.Integer(1, 5)})


def _loss(x, kind, n):
    return (x - 0.5) ** 2 + "abcde".index(kind) * 0.3 + abs(n - 3)


def test_an_optimizer_takes_it_and_a_resumed_study_proposes_the_same(tmp_path):
    path = str(tmp_path / "s.db")
    opts = dict(random_state=3, n_initial=6, surrogate_options={"categorical": "one-hot"})
    opt = run_trials(mfbo.Optimizer(SPACE, storage=path, **opts), _loss, 14)
    assert opt.proposer.model._one_hot is not None
    opt.close()
    resumed = mfbo.Optimizer(SPACE, storage=path, **opts)
    again = run_trials(mfbo.Optimizer(SPACE, **opts), _loss, 14)
    assert resumed.ask().params == again.ask().params


def test_minimize_runs_with_it():
    result = mfbo.minimize(_loss, SPACE, n_calls=20, random_state=0, progress_bar=False,
                           surrogate_options={"categorical": "one-hot-narrow"})
    assert len(result.func_vals) == 20 and result.func_vals.min() < 1.0


@pytest.mark.parametrize("bad", ["onehot", "", None, 1])
def test_a_bad_encoding_names_the_argument(bad):
    with pytest.raises(ValueError, match="categorical"):
        MondrianModel(2, 0, categorical=bad)
