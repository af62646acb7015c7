"""The branch bandit: MaxUCB over the values of a conditional space's branching parameter; a
point of the arm it pulls when that is not the incumbent's, else it passes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from acquisitions import level_index

from mfbo import Categorical, Integer, Optimizer, Real, Space
from mfbo.proposal import AcquisitionSearch, BranchBandit, get_recipe
from mfbo.proposal.steps.bandit import arm_has_earned, branch_dimension, branch_path, \
    flat_path, max_ucb, nested_dimension, own_parameters, path_of
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


def test_the_nested_choice_is_the_conditional_parent_active_under_the_arm():
    from benchmarks.problems.conditional import JENATTON_SPACE, DeepTree, cash_space

    tree = DeepTree().space
    at = {n: d for d, n in enumerate(tree.names)}
    assert [tree.names[nested_dimension(tree, [(at["b"], a)])] for a in (0, 1)] == ["b0", "b1"]
    below = [nested_dimension(tree, [(at["b"], 1), (at["b1"], a)]) for a in (0, 1)]
    assert [tree.names[d] for d in below] == ["b10", "b11"]
    assert nested_dimension(tree, [(at["b"], 1), (at["b1"], 0), (at["b10"], 1)]) is None
    cash = cash_space("classification")
    model = cash.names.index("model")
    nested = {cash.dimensions["model"].choices[a]: nested_dimension(cash, [(model, a)])
              for a in range(6)}
    # svm's kernel has conditions of its own; knn's weights and rf's bootstrap have none,
    # and "preprocessing" is unconditional: no nested choice
    assert cash.names[nested.pop("svm")] == "svm_kernel"
    assert set(nested.values()) == {None}
    jen = JENATTON_SPACE
    assert [jen.names[nested_dimension(jen, [(0, a)])] for a in (0, 1)] == ["x2", "x3"]


def _tree_observations(seed: int, n: int):
    """``(space, X, y)``: ``n`` random configurations of the depth-3 tree of binary choices
    (canonical unit rows) and their losses."""
    from benchmarks.problems.conditional import DeepTree

    tree = DeepTree()
    space = tree.space
    X = space.canonical(space.sample(n, np.random.default_rng(seed)))
    return space, X, np.array([tree(p) for p in space.from_unit(X)])


def _rows_under(X, path) -> np.ndarray:
    """Which rows of ``X`` make every binary choice of ``path`` (active where it is made)."""
    rows = np.ones(X.shape[0], dtype=bool)
    for d, arm in path:
        rows &= (X[:, d] >= 0.0) & (X[:, d] <= 1.0) & ((X[:, d] >= 0.5) == bool(arm))
    return rows


def _path_by_hand(space, X, y, weight) -> list[tuple[int, int]]:
    """MaxUCB's choices down the tree computed level by level from the observations that
    made the choices above; ``weight(level, m)``: the exploration weight at that level (0 the
    outermost) from ``m`` observations."""
    expected = []
    for level, name in enumerate(("b", None, None)):
        d = space.names.index(name) if name else nested_dimension(space, expected)
        rows = _rows_under(X, expected)
        arms = (X[rows, d] >= 0.5).astype(int)  # binary choices
        a = weight(level, int(rows.sum()))
        expected.append((d, int(np.argmax(max_ucb(arms, y[rows], 2, a)))))
    return expected


def test_the_path_is_max_ucb_at_each_level_on_the_observations_above_it():
    space, X, y = _tree_observations(3, 40)
    for alpha, inner in ((0.5, None), (2.0, None), (0.5, 4.0)):
        path = branch_path(space, X, y, alpha, nested_alpha=inner)
        expected = _path_by_hand(space, X, y, lambda level, m: alpha if level == 0 or
                                 inner is None else inner)
        assert path == expected
        assert branch_path(space, X, y, alpha, nested=False) == expected[:1]
    assert branch_path(Space(SPACE), X[:, :2], y, 0.5) == []


def test_a_weight_per_arm_grows_at_each_choice_past_its_observations_per_arm():
    space, X, y = _tree_observations(4, 60)
    for alpha in (0.5, 1.0):
        for per_arm in (4, 10, 20, 25, 40):  # (20 and 25: the weight stays alpha at 60 / 2)
            expected = _path_by_hand(space, X, y,  # (binary choices: k = 2)
                                     lambda level, m: alpha * max(1.0, m / (2 * per_arm)))
            assert branch_path(space, X, y, alpha, per_arm=per_arm) == expected
    # 60 observations over two arms are 30 an arm: at 40 the weight does not grow, at 4 it
    # changes the choices here
    assert branch_path(space, X, y, 0.5, per_arm=40) == branch_path(space, X, y, 0.5)
    assert branch_path(space, X, y, 0.5, per_arm=4) != branch_path(space, X, y, 0.5)
    # nested="grown": on down to a choice only past per_arm observations for each of its
    # values (binary here: more than 2 per_arm made the choices above it)
    for per_arm in (2, 4, 10, 40):
        grown = branch_path(space, X, y, 0.5, nested="grown", per_arm=per_arm)
        full = branch_path(space, X, y, 0.5, per_arm=per_arm)
        top = branch_path(space, X, y, 0.5, nested=False, per_arm=per_arm)
        assert grown == full[:len(grown)] and len(grown) >= 1 and grown[:1] == top
        for depth in range(1, len(full)):
            made = _rows_under(X, full[:depth]).sum()
            assert (len(grown) > depth) == (made > 2 * per_arm)
    assert branch_path(space, X, y, 0.5, nested="grown", per_arm=40) == \
        branch_path(space, X, y, 0.5, nested=False)


#: a choice nested under one arm: "b" splits into "u" (which holds the optimum) and "v"
NESTED = {"kind": Categorical(["a", "b"]), "x": Real(0.0, 1.0),
          "sub": Categorical(["u", "v"], when={"kind": "b"}),
          "y": Real(0.0, 1.0, when={"sub": "u"})}


def nested_loss(kind, x, sub=None, y=0.5):
    base = {"a": 0.2, "b": {"u": 0.0, "v": 0.5}.get(sub, 0.0)}[kind]
    return base + (x - 0.3) ** 2 + (y - 0.7) ** 2


NESTED_DESIGN = [{"kind": "a", "x": 0.35}, {"kind": "b", "x": 0.9, "sub": "v"},
                 {"kind": "b", "x": 0.3, "sub": "v"}, {"kind": "b", "x": 0.05, "sub": "u",
                                                       "y": 0.0}]


@pytest.mark.parametrize("move", ["search", "parzen"])
def test_a_nested_pull_makes_every_choice_of_the_path(move):
    space = Space(NESTED)
    opt = run(recipe(move=move, nested=True, alpha=2.0), 20, design=NESTED_DESIGN,
              space=NESTED, f=nested_loss)
    pulls = 0
    for i, t in enumerate(opt.trials[4:], start=4):
        done = opt.trials[:i]
        X = space.to_unit([s.params for s in done])
        y = np.array([s.value for s in done])
        path = branch_path(space, X, y, 2.0)
        best = X[int(np.argmin(y))]
        same = all(int(best[d] >= 0.5) == arm for d, arm in path)  # binary choices
        if same:
            assert t.origin != "bandit"
            continue
        pulls += 1
        assert t.origin == "bandit"
        u = space.to_unit(t.params)[0]
        for d, arm in path:
            assert int(u[d] >= 0.5) == arm
        space.validate(t.params)
    assert pulls > 0


def test_nested_proposals_repeat_after_a_reopen(tmp_path):
    check_reopen_repeats(NESTED, recipe(move="parzen", nested=True, alpha=2.0), nested_loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")


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
                                        (dict(tol=1.0), "tol"), (dict(tol=-0.1), "tol"),
                                        (dict(nested=1), "nested"),
                                        (dict(flat="yes"), "flat"),
                                        (dict(nested_alpha=0.0), "nested_alpha"),
                                        (dict(nested_alpha="1"), "nested_alpha"),
                                        (dict(per_parameter=1), "per_parameter"),
                                        (dict(per_parameter=True, move="search"),
                                         "per_parameter"),
                                        (dict(per_parameter="yes"), "per_parameter"),
                                        (dict(per_parameter="earned", move="random"),
                                         "per_parameter"),
                                        (dict(burst=0), "burst"), (dict(burst=2.0), "burst"),
                                        (dict(burst=True), "burst"),
                                        (dict(refine="random"), "refine"),
                                        (dict(earn_quantile=0.0), "earn_quantile"),
                                        (dict(earn_quantile=1.0), "earn_quantile"),
                                        (dict(earn_quantile="0.5"), "earn_quantile"),
                                        (dict(nested="yes"), "nested"),
                                        (dict(per_parameter="leaves"), "per_parameter"),
                                        (dict(per_parameter="leaf", move="search"),
                                         "per_parameter"),
                                        (dict(leaf_size=0), "leaf_size"),
                                        (dict(leaf_size=1.5), "leaf_size"),
                                        (dict(leaf_size=True), "leaf_size"),
                                        (dict(cooldown=-1), "cooldown"),
                                        (dict(cooldown=1.5), "cooldown"),
                                        (dict(cooldown=True), "cooldown"),
                                        (dict(cooldown="2"), "cooldown"),
                                        (dict(grow_after=-1), "grow_after"),
                                        (dict(grow_after=2.5), "grow_after"),
                                        (dict(grow_after=True), "grow_after"),
                                        (dict(grow_per_arm=-2), "grow_per_arm"),
                                        (dict(grow_per_arm=0.5), "grow_per_arm"),
                                        (dict(nested="grown"), "grow_per_arm"),
                                        (dict(nested="deep"), "nested")])
def test_a_bad_setting_is_refused(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        BranchBandit(**bad)


def test_the_default_recipe_holds_it_after_the_plateau_escape():
    # after the plateau escape and the stall escape, which passes in a conditional space,
    # and before the local and Parzen steps, which would otherwise pre-empt it
    from mfbo.proposal import PlateauEscape, StallEscape

    steps = get_recipe("mondrian").steps
    at = next(i for i, s in enumerate(steps) if isinstance(s, BranchBandit))
    assert isinstance(steps[at - 2], PlateauEscape)
    assert isinstance(steps[at - 1], StallEscape) and steps[at - 1].conditional is False
    assert steps[at] == BranchBandit() == BranchBandit(alpha=0.5, move="parzen", patience=6)


#: a space without conditions whose categorical values trap a run: "sq" starts well, "hu"
#: holds the optimum (0.0) at x = 0.8, far from "sq"'s best x
FLAT = {"loss": Categorical(["sq", "hu", "ep"]), "rate": Categorical(["c", "a"]),
        "x": Real(0.0, 1.0), "n": Integer(1, 5)}


def flat_loss(loss, rate, x, n):
    centre = {"sq": 0.2, "hu": 0.8, "ep": 0.5}[loss]
    return {"sq": 0.1, "hu": 0.0, "ep": 1.0}[loss] + 0.05 * (rate == "a") + (x - centre) ** 2


#: a design that saw "hu" only far from its good x
FLAT_DESIGN = [{"loss": "sq", "rate": "c", "x": 0.25, "n": 1},
               {"loss": "hu", "rate": "a", "x": 0.05, "n": 3},
               {"loss": "ep", "rate": "c", "x": 0.9, "n": 5},
               {"loss": "hu", "rate": "c", "x": 0.1, "n": 2}]


def test_the_flat_path_is_max_ucb_per_unconditional_categorical_parameter():
    space = Space(FLAT)
    rng = np.random.default_rng(5)
    X = space.canonical(space.sample(30, rng))
    y = np.array([flat_loss(**p) for p in space.from_unit(X)])
    for alpha in (0.5, 2.0):
        expected = []
        for d, k in ((0, 3), (1, 2)):  # "x" and "n" are no arms
            arms = np.minimum((X[:, d] * k).astype(int), k - 1)
            expected.append((d, int(np.argmax(max_ucb(arms, y, k, alpha)))))
        assert flat_path(space, X, y, alpha) == expected
    assert flat_path(space, X[:0], y[:0], 0.5) == []
    assert flat_path(Space(SPACE), X[:, 2:4], y, 0.5) == []  # no categorical parameter
    # a conditional categorical is no arm: only the unconditional "kind" of the tree
    tree = Space(TREE)
    T = tree.canonical(tree.sample(10, rng))
    assert [d for d, _ in flat_path(tree, T, np.arange(10.0), 0.5)] == [0]


def test_a_flat_pull_makes_every_parameters_choice_and_differs_from_the_incumbent():
    opt = run(recipe(move="parzen", flat=True), 20, design=FLAT_DESIGN, space=FLAT,
              f=flat_loss)
    space = Space(FLAT)
    pulls = 0
    for i, t in enumerate(opt.trials[4:], start=4):
        done = opt.trials[:i]
        X = np.vstack([space.to_unit(s.params) for s in done])
        y = np.array([s.value for s in done])
        path = flat_path(space, X, y, 0.5)
        incumbent = X[int(np.argmin(y))]
        same = all(min(int(incumbent[d] * k), k - 1) == arm
                   for (d, arm), k in zip(path, (3, 2)))
        assert (t.origin == "bandit") == (not same)
        if t.origin == "bandit":
            pulls += 1
            u = space.to_unit(t.params)[0]
            assert [min(int(u[d] * k), k - 1) for d, k in ((0, 3), (1, 2))] == \
                [arm for _, arm in path]
    assert pulls > 0
    # without flat the bandit passes in this space
    plain = run(recipe(move="parzen"), 20, design=FLAT_DESIGN, space=FLAT, f=flat_loss)
    assert "bandit" not in {t.origin for t in plain.trials}


def test_flat_changes_nothing_where_the_space_branches():
    a = run(recipe(move="parzen"), 16, design=DESIGN)
    b = run(recipe(move="parzen", flat=True), 16, design=DESIGN)
    assert [t.params for t in a.trials] == [t.params for t in b.trials]


def test_flat_proposals_repeat_after_a_reopen(tmp_path):
    check_reopen_repeats(FLAT, recipe(move="parzen", flat=True), flat_loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")


@pytest.mark.parametrize("nested", [False, True])
def test_per_parameter_pulls_make_the_path_s_choices_and_are_active(nested):
    space = Space(NESTED)
    settings = dict(move="parzen", nested=nested, alpha=2.0, per_parameter=True)
    opt = run(recipe(**settings), 20, design=NESTED_DESIGN, space=NESTED, f=nested_loss)
    pulls = 0
    for i, t in enumerate(opt.trials[4:], start=4):
        done = opt.trials[:i]
        X = space.to_unit([s.params for s in done])
        y = np.array([s.value for s in done])
        path = branch_path(space, X, y, 2.0, nested=nested)
        best = X[int(np.argmin(y))]
        if all(int(best[d] >= 0.5) == arm for d, arm in path):
            assert t.origin != "bandit"
            continue
        pulls += 1
        assert t.origin == "bandit"
        u = space.to_unit(t.params)[0]
        assert all(int(u[d] >= 0.5) == arm for d, arm in path)
        space.validate(t.params)
        assert ("y" in t.params) == (t.params.get("sub") == "u")
    assert pulls > 0


def test_per_parameter_pulls_draw_the_arm_s_own_parameters_near_its_best():
    # "b" seen at two points, its own y at 0.62 and 0.1: per parameter a pull of "b" draws y
    # near 0.62 (its best), pooled it draws y from the prior (no best point is in "b")
    design = [{"kind": "a", "x": 0.3}, {"kind": "a", "x": 0.35}, {"kind": "c", "x": 0.3},
              {"kind": "b", "x": 0.9, "y": 0.62}, {"kind": "b", "x": 0.95, "y": 0.1},
              {"kind": "a", "x": 0.25}, {"kind": "a", "x": 0.32}, {"kind": "c", "x": 0.9}]

    def pulled_ys(per_parameter):
        out = []
        for seed in range(6):
            opt = run(recipe(search=False, move="parzen", per_parameter=per_parameter), 1,
                      seed=seed, design=design)
            t = opt.trials[-1]
            assert t.origin == "bandit" and t.params["kind"] == "b"
            out.append(t.params["y"])
        return np.array(out)
    own, pooled = pulled_ys(True), pulled_ys(False)
    assert np.mean(np.abs(own - 0.62)) < np.mean(np.abs(pooled - 0.62))


def test_per_parameter_pulls_repeat_after_a_reopen(tmp_path):
    check_reopen_repeats(NESTED, recipe(move="parzen", nested=True, alpha=2.0,
                                        per_parameter=True), nested_loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")


def test_the_path_of_a_row_reads_the_choices_the_bandit_makes():
    from benchmarks.problems.conditional import DeepTree

    space = DeepTree().space
    at = {n: d for d, n in enumerate(space.names)}
    X = space.canonical(space.sample(30, np.random.default_rng(0)))
    for u in X:
        p = path_of(space, u, nested=True)
        assert [space.names[d] for d, _ in p][:1] == ["b"] and len(p) == 3
        assert all(int(u[d] >= 0.5) == arm for d, arm in p)
        assert path_of(space, u) == p[:1]
        assert p[1][0] == at["b1" if p[0][1] else "b0"]
    flat = Space(FLAT)
    u = flat.to_unit([{"loss": "hu", "rate": "c", "x": 0.2, "n": 2}])[0]
    assert path_of(flat, u) == []
    assert [(flat.names[d], a) for d, a in path_of(flat, u, flat=True)] == [("loss", 1),
                                                                            ("rate", 0)]


def test_an_arm_has_earned_once_its_best_is_below_the_median():
    space = Space(TREE)
    X = space.to_unit([{"kind": "a", "x": 0.3}, {"kind": "b", "x": 0.9, "y": 0.1},
                       {"kind": "c", "x": 0.3}, {"kind": "b", "x": 0.2, "y": 0.6}])
    b, c = [(0, 1)], [(0, 2)]
    y = np.array([1.0, 3.0, 3.0, 4.0])  # median 3: not below it
    assert not arm_has_earned(space, X, y, b) and not arm_has_earned(space, X, y, c)
    y = np.array([1.0, 3.0, 3.0, 2.4])  # median 2.7
    assert arm_has_earned(space, X, y, b) and not arm_has_earned(space, X, y, c)
    assert not arm_has_earned(space, X[:1], y[:1], b)  # never pulled
    # below the median but not below the lowest quarter (1.0, 2.4, 3.0, 3.0: 2.05)
    assert not arm_has_earned(space, X, y, b, quantile=0.25)
    assert arm_has_earned(space, X, np.array([2.0, 3.0, 3.0, 1.0]), b, quantile=0.25)


#: "b" seen at one poor point (0.78) and at one below the median loss that is not the best
EARNED = [{"kind": "a", "x": 0.3}, {"kind": "a", "x": 0.32}, {"kind": "a", "x": 0.25},
          {"kind": "b", "x": 0.8, "y": 0.6}, {"kind": "b", "x": 0.95, "y": 0.1},
          {"kind": "c", "x": 0.3}, {"kind": "c", "x": 0.5}, {"kind": "c", "x": 0.9}]


@pytest.mark.parametrize("earned", [True, False])
def test_an_earned_pull_is_per_parameter_and_an_unearned_one_the_default_s(earned):
    design = EARNED if earned else EARNED[:3] + EARNED[4:]  # "b" only at its poor point
    ys = [loss(**p) for p in design]
    b = [v for v, p in zip(ys, design) if p["kind"] == "b"]
    assert (min(b) < np.median(ys)) == earned and min(b) > min(ys)

    def pulled(per_parameter, seed):
        opt = run(recipe(search=False, move="parzen", per_parameter=per_parameter), 1,
                  seed=seed, design=design)
        t = opt.trials[-1]
        assert t.origin == "bandit" and t.params["kind"] == "b"
        return t.params
    for seed in range(3):
        assert pulled("earned", seed) == pulled(earned, seed)
    assert any(pulled(True, seed) != pulled(False, seed) for seed in range(3))


@pytest.mark.parametrize("refine", ["search", "parzen"])
@pytest.mark.parametrize("nested", [False, True])
def test_a_burst_refines_the_arm_pulled_until_it_is_over_or_holds_the_incumbent(refine, nested):
    space, burst = Space(NESTED), 3
    opt = run(recipe(move="parzen", nested=nested, alpha=2.0, burst=burst, refine=refine), 24,
              design=NESTED_DESIGN, space=NESTED, f=nested_loss)
    X = space.to_unit([t.params for t in opt.trials])
    y = np.array([t.value for t in opt.trials])
    pulls = refinements = 0
    run_arm, run_len = None, 0  # the arm of the bandit's proposals in a row, and how many
    for i in range(4, len(y)):
        t, best = opt.trials[i], X[int(np.argmin(y[:i]))]
        space.validate(t.params)  # active and allowed
        owed = run_arm is not None and run_len % burst and not all(
            int(best[d] >= 0.5) == a for d, a in run_arm)
        if owed:  # the burst goes on in the arm pulled
            assert t.origin == "bandit" and path_of(space, X[i], nested) == run_arm
            refinements += 1
            run_len += 1
            continue
        path = branch_path(space, X[:i], y[:i], 2.0, nested=nested)
        if all(int(best[d] >= 0.5) == a for d, a in path):
            assert t.origin != "bandit"
            run_arm, run_len = None, 0
            continue
        assert t.origin == "bandit" and all(int(X[i, d] >= 0.5) == a for d, a in path)
        pulls += 1
        same = run_arm is not None and path_of(space, X[i], nested) == run_arm
        run_arm, run_len = path_of(space, X[i], nested), (run_len + 1 if same else 1)
    assert pulls > 0 and refinements > 0


def test_bursts_and_earned_pulls_repeat_after_a_reopen(tmp_path):
    check_reopen_repeats(NESTED, recipe(move="parzen", nested=True, alpha=2.0, burst=3,
                                        per_parameter="earned"), nested_loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")


def test_an_arm_s_own_parameters_are_those_its_choice_makes_active():
    from benchmarks.problems.conditional import JENATTON_SPACE, DeepTree, cash_space

    tree = DeepTree().space
    at = {n: d for d, n in enumerate(tree.names)}
    paths = ([("b", 1)], [("b", 1), ("b1", 0)], [("b", 1), ("b1", 0), ("b10", 1)])
    got = [(own_parameters(tree, p), own_parameters(tree, p, below=False))
           for p in ([(at[n], a) for n, a in p] for p in paths)]
    # b = 1: r1, b1, b10 or b11 and one leaf's real (below=False: r1 and b1); b1 = 0: b10 and
    # x100 or x101 (b10 alone); the leaf b10 = 1: x101
    assert got == [(4, 2), (2, 1), (1, 1)]
    for task, svm in (("regression", (5, 3)), ("classification", (4, 2))):
        cash = cash_space(task)
        model, kernel = cash.names.index("model"), cash.names.index("svm_kernel")
        own = {c: (own_parameters(cash, [(model, a)]), own_parameters(cash, [(model, a)], False))
               for a, c in enumerate(cash.dimensions["model"].choices)}
        # svm: C, the kernel, gamma, degree (poly) and epsilon (regression); the kernel counts
        # as one with below=False; knn: k and its weights (no condition reads them)
        assert own == {"linear": (1, 1), "svm": svm, "knn": (2, 2), "rf": (5, 5),
                       "et": (4, 4), "hgb": (4, 4)}
        assert [own_parameters(cash, [(model, 1), (kernel, a)]) for a in range(3)] == [1, 2, 0]
    assert own_parameters(JENATTON_SPACE, [(0, 0)]) == 3  # x2, x4 or x5, r8
    flat = Space(FLAT)
    assert own_parameters(flat, [(0, 1)]) == 0  # no condition reads "loss"


def test_a_leaf_nesting_goes_on_down_only_under_an_arm_with_few_parameters_of_its_own():
    from benchmarks.problems.conditional import DeepTree, cash_space

    tree = DeepTree().space
    X = tree.canonical(tree.sample(30, np.random.default_rng(0)))
    y = np.random.default_rng(1).random(30)
    for u in X:  # every arm of the tree has at most two: the same path as nested=True
        assert path_of(tree, u, nested="leaf") == path_of(tree, u, nested=True)
        assert path_of(tree, u, nested="leaf", leaf_size=1) == path_of(tree, u)  # r_b and b_b
    assert branch_path(tree, X, y, 0.5, nested="leaf") == branch_path(tree, X, y, 0.5)
    assert branch_path(tree, X, y, 0.5, nested="leaf", leaf_size=1) == branch_path(
        tree, X, y, 0.5, nested=False)
    for task, depth in (("regression", 1), ("classification", 2)):
        cash = cash_space(task)
        row = {"preprocessing": "none", "model": "svm", "svm_C": 1.0, "svm_kernel": "rbf",
               "svm_gamma": 0.1, **({"svm_epsilon": 0.1} if task == "regression" else {})}
        u = cash.to_unit([row])[0]
        assert len(path_of(cash, u, nested=True)) == 2
        # the SVM's C, epsilon and kernel are three: its kernel stays the move's draw
        assert len(path_of(cash, u, nested="leaf")) == depth
        assert len(path_of(cash, u, nested="leaf", leaf_size=3)) == 2
        # the bandit's own path stops there too when it pulls the SVM (far the best family)
        Xc = cash.canonical(cash.sample(60, np.random.default_rng(2)))
        svm = level_index(Xc[:, cash.names.index("model")], 6) == 1
        yc = np.where(svm, 0.1, 1.0) * np.random.default_rng(3).random(60) + ~svm
        path = branch_path(cash, Xc, yc, 0.5, nested="leaf")
        assert [cash.names[d] for d, _ in path] == ["model", "svm_kernel"][:depth]
        assert path[0][1] == 1 and branch_path(cash, Xc, yc, 0.5)[:1] == path[:1]


#: "b" (own parameters: the choice "sub" and, under "u", "y") seen at two points, the worse
#: in "u"; "a" at five, the best among them
LEAF_DESIGN = [{"kind": "a", "x": x} for x in (0.3, 0.32, 0.25, 0.36, 0.22)] + [
    {"kind": "b", "x": 0.9, "sub": "v"}, {"kind": "b", "x": 0.9, "sub": "u", "y": 0.65}]


@pytest.mark.parametrize("leaf_size, leaf", [(2, True), (1, False)])
def test_a_leaf_pull_is_per_parameter_only_in_an_arm_with_few_parameters(leaf_size, leaf):
    space = Space(NESTED)
    assert own_parameters(space, [(0, 1)]) == 2  # "sub" and "y"

    def pulled(seed, **settings):
        opt = run(recipe(search=False, move="parzen", alpha=2.0, **settings), 1, seed=seed,
                  design=LEAF_DESIGN, space=NESTED, f=nested_loss)
        t = opt.trials[-1]
        assert t.origin == "bandit" and t.params["kind"] == "b"
        space.validate(t.params)
        return t.params
    for seed in range(3):
        assert pulled(seed, per_parameter="leaf", leaf_size=leaf_size) == pulled(
            seed, per_parameter=leaf)
    assert any(pulled(seed, per_parameter=True) != pulled(seed) for seed in range(3))


@pytest.mark.parametrize("nested", ["leaf", True])
def test_leaf_pulls_make_the_path_s_choices_and_repeat_after_a_reopen(nested, tmp_path):
    space = Space(NESTED)
    settings = dict(move="parzen", nested=nested, alpha=2.0, per_parameter="leaf")
    opt = run(recipe(**settings), 20, design=NESTED_DESIGN, space=NESTED, f=nested_loss)
    pulls = 0
    for i, t in enumerate(opt.trials[4:], start=4):
        X = space.to_unit([s.params for s in opt.trials[:i]])
        y = np.array([s.value for s in opt.trials[:i]])
        path = branch_path(space, X, y, 2.0, nested=nested)
        if all(int(X[int(np.argmin(y)), d] >= 0.5) == arm for d, arm in path):
            assert t.origin != "bandit"
            continue
        pulls += 1
        u = space.to_unit(t.params)[0]
        assert t.origin == "bandit" and all(int(u[d] >= 0.5) == arm for d, arm in path)
        space.validate(t.params)
    assert pulls > 0
    check_reopen_repeats(NESTED, recipe(**settings), nested_loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")


@pytest.mark.parametrize("cooldown", [1, 3])
def test_after_a_pull_the_bandit_waits_cooldown_proposals(cooldown):
    opt = run(recipe(move="parzen", cooldown=cooldown), 30, design=DESIGN)
    origins = [t.origin for t in opt.trials]
    pulls = [i for i, o in enumerate(origins) if o == "bandit"]
    assert len(pulls) > 1
    assert min(np.diff(pulls)) > cooldown
    # the proposals between pulls are the search's, and MaxUCB keeps asking without it
    assert {origins[i] for i in range(pulls[0], len(origins))} == {"bandit", "acquisition"}
    eager = run(recipe(move="parzen"), 30, design=DESIGN)
    assert min(np.diff([i for i, t in enumerate(eager.trials) if t.origin == "bandit"])) == 1
    for t in opt.trials:
        Space(TREE).validate(t.params)


def test_a_cooldown_of_0_is_the_default_s_bandit():
    assert BranchBandit().cooldown == 0
    runs = [[(t.params, t.origin) for t in run(recipe(move="parzen", **c), 20,
                                               design=DESIGN).trials]
            for c in ({}, {"cooldown": 0})]
    assert runs[0] == runs[1]


def test_cooldown_proposals_repeat_after_a_reopen(tmp_path):
    check_reopen_repeats(TREE, recipe(move="parzen", cooldown=2), loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")


def test_the_exploration_weights_grow_in_proportion_past_grow_after():
    bandit = BranchBandit(alpha=0.5, nested_alpha=1.0, grow_after=10)
    assert bandit.weights(3) == bandit.weights(10) == (0.5, 1.0)
    assert bandit.weights(40) == (2.0, 4.0)
    assert BranchBandit(alpha=0.5, grow_after=10).weights(25) == (1.25, None)
    assert BranchBandit().grow_after == 0 and BranchBandit().weights(10 ** 6) == (0.5, None)


def test_a_growing_weight_is_the_default_s_bandit_until_grow_after_then_pulls_more():
    def trials(**settings):
        return [(t.params, t.origin) for t in run(recipe(move="parzen", **settings), 36,
                                                  design=DESIGN).trials]

    fixed, growing = trials(), trials(grow_after=16)
    assert growing[:16] == fixed[:16] and growing != fixed
    # (the 17th proposal is the first made with a larger weight)
    pulls = [sum(o == "bandit" for _, o in run_[16:]) for run_ in (fixed, growing)]
    assert pulls[1] > pulls[0]
    for params, _ in growing:
        Space(TREE).validate(params)


def test_growing_weights_repeat_after_a_reopen(tmp_path):
    check_reopen_repeats(TREE, recipe(move="parzen", grow_after=6), loss, 12, 3,
                         str(tmp_path / "s.db"), "bandit")
