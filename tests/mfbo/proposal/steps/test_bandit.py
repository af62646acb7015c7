"""The branch bandit: MaxUCB over the values of a conditional space's branching parameter; a
point of the arm it pulls when that is not the incumbent's, else it passes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mfbo import Categorical, Integer, Optimizer, Real, Space
from mfbo.proposal import AcquisitionSearch, BranchBandit, get_recipe
from mfbo.proposal.steps.bandit import branch_dimension, max_ucb
from tests.support import SPACE, check_reopen_repeats, quad, run_trials

TREE = {"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0),
        "y": Real(0.0, 1.0, when={"kind": "b"})}


def loss(kind, x, y=0.5):
    # "a" is where a search starts well; "b" holds the optimum (0.0) at y = 0.7
    return {"a": 0.2, "b": 0.0, "c": 2.0}[kind] + (x - 0.3) ** 2 + (y - 0.7) ** 2


def recipe(search=True, **settings):
    settings = {"patience": 0, **settings}  # MaxUCB's own: asked before every proposal
    steps = (BranchBandit(n_random=200, **settings),)
    if search:
        steps += (AcquisitionSearch(n_random=200),)
    return dataclasses.replace(get_recipe("mondrian"), steps=steps, name=None)


def test_max_ucb_is_the_best_scaled_reward_plus_the_squared_bonus():
    arms = np.array([0, 0, 1, 2, 2, 2])
    y = np.array([3.0, 1.0, 2.0, 5.0, 4.0, 1.0])
    got = max_ucb(arms, y, 4, alpha=0.5)
    r = 0.01 + 0.98 * (5.0 - y) / 4.0  # rewards -y, min-max scaled to [0.01, 0.99]
    bonus = lambda n: (0.5 * np.log(6) / n) ** 2  # noqa: E731
    expected = [r[:2].max() + bonus(2), r[2] + bonus(1), r[3:].max() + bonus(3), np.inf]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # equal losses: every reward the same; the arm pulled least has the largest index
    flat = max_ucb(np.array([0, 0, 1]), np.ones(3), 2, alpha=1.0)
    assert flat[1] > flat[0]


def test_the_branching_parameter_is_the_parent_of_the_most_conditions():
    from benchmarks.problems.conditional import DeepTree, cash_space

    cash = cash_space("regression")
    assert cash.names[branch_dimension(cash)] == "model"  # not "preprocessing" (one child)
    tree = DeepTree().space
    assert tree.names[branch_dimension(tree)] == "b"  # through its conditional children
    assert branch_dimension(Space(SPACE)) is None
    flat = Space({"kind": Categorical(["a", "b"]), "x": Real(0.0, 1.0)})
    assert branch_dimension(flat) is None  # a categorical no condition reads
    numeric = Space({"n": Integer(1, 3), "x": Real(0.0, 1.0, when={"n": 2})})
    assert branch_dimension(numeric) is None  # the parent is not categorical


def run(surrogate, n, seed=0, design=None, space=TREE, f=loss):
    opt = Optimizer(space, surrogate=surrogate, random_state=seed,
                    n_initial=len(design) if design else 4)
    for p in design or ():
        opt.tell(p, f(**p))
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    return opt


#: a design that saw "b" only at poor points
DESIGN = [{"kind": "a", "x": 0.35}, {"kind": "b", "x": 0.9, "y": 0.0},
          {"kind": "c", "x": 0.3}, {"kind": "b", "x": 0.05, "y": 0.05}]


@pytest.mark.parametrize("move", ["search", "random", "parzen"])
def test_each_pull_is_the_arm_max_ucb_chose_and_not_the_incumbents(move):
    opt = run(recipe(move=move), 24, design=DESIGN)
    space = Space(TREE)
    kinds = ["a", "b", "c"]
    pulls = 0
    for i, t in enumerate(opt.trials[4:], start=4):
        done = opt.trials[:i]
        arms = np.array([kinds.index(s.params["kind"]) for s in done])
        y = np.array([s.value for s in done])
        index = max_ucb(arms, y, 3, 0.5)
        chosen, incumbent = int(np.argmax(index)), int(arms[np.argmin(y)])
        if chosen != incumbent:
            assert t.origin == "bandit" and t.params["kind"] == kinds[chosen]
            pulls += 1
        else:
            assert t.origin != "bandit"
        assert ("y" in t.params) == (t.params["kind"] == "b")
        space.validate(t.params)
    assert pulls > 0


def test_with_patience_it_pulls_only_while_the_run_stalls():
    from mfbo.proposal.steps.stall import failures_in_a_row

    patience = 3
    opt = run(recipe(move="search", patience=patience), 24, design=DESIGN)
    y = np.array([t.value for t in opt.trials])
    pulls = [i for i, t in enumerate(opt.trials) if t.origin == "bandit"]
    assert pulls
    for i in pulls:
        assert failures_in_a_row(y[:i], 4, 1e-3) >= patience
    # without patience the same run pulls before any stall
    eager = run(recipe(move="search"), 24, design=DESIGN)  # patience 0
    first = next(i for i, t in enumerate(eager.trials) if t.origin == "bandit")
    assert first < pulls[0]


def test_the_bandit_finds_a_branch_the_search_alone_misses():
    plain = dataclasses.replace(get_recipe("mondrian"),
                                steps=(AcquisitionSearch(n_random=200),), name=None)
    plain_best = min(t.value for t in run(plain, 30, design=DESIGN).trials)
    opt = run(recipe(move="random"), 30, design=DESIGN)
    assert any(t.origin == "bandit" for t in opt.trials)
    assert min(t.value for t in opt.trials) < 0.2 <= plain_best


def test_it_passes_without_a_branching_parameter_and_on_a_candidate_set():
    opt = run(recipe(search=False), 10, space=SPACE, f=quad)
    assert [t.origin for t in opt.trials[4:]] == ["random"] * 6
    cands = [{"kind": k, "x": x, **({"y": 0.5} if k == "b" else {})}
             for k in "abc" for x in (0.1, 0.5, 0.9)]
    opt = run_trials(Optimizer(TREE, surrogate=recipe(search=False), random_state=0,
                               n_initial=2, candidates=cands), loss, 6)
    assert {t.origin for t in opt.trials[2:]} == {"random"}


def test_the_same_proposals_after_a_reopen(tmp_path):
    check_reopen_repeats(TREE, recipe(move="parzen"), loss, 12, 3, str(tmp_path / "s.db"),
                         "bandit")


@pytest.mark.parametrize("bad, match", [(dict(alpha=0), "alpha"), (dict(alpha=-1.0), "alpha"),
                                        (dict(alpha=True), "alpha"),
                                        (dict(alpha=float("nan")), "alpha"),
                                        (dict(move="sideways"), "move"),
                                        (dict(n_random=0), "n_random"),
                                        (dict(patience=-1), "patience"),
                                        (dict(patience=1.5), "patience"),
                                        (dict(tol=1.0), "tol"), (dict(tol=-0.1), "tol")])
def test_a_bad_setting_is_refused(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        BranchBandit(**bad)


def test_the_default_recipe_holds_it_after_the_plateau_escape():
    from mfbo.proposal import PlateauEscape

    steps = get_recipe("mondrian").steps
    at = next(i for i, s in enumerate(steps) if isinstance(s, BranchBandit))
    assert isinstance(steps[at - 1], PlateauEscape)
    assert steps[at] == BranchBandit() == BranchBandit(alpha=0.5, move="parzen", patience=6)
