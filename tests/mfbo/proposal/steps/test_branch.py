"""The branch escape: after a run of proposals in the incumbent's categorical values, the
acquisition's best point with other values; it passes where it does not apply."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mfbo import Categorical, Optimizer, Real
from mfbo.proposal import AcquisitionSearch, BranchEscape, get_recipe
from mfbo.proposal.steps.categories import branch_codes
from tests.support import SPACE, check_reopen_repeats, quad

TREE = {"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0),
        "y": Real(0.0, 1.0, when={"kind": "b"})}


def loss(kind, x, y=0.5):
    # "a" is where a search starts well; "b" holds the optimum (0.0) at y = 0.7
    return {"a": 0.2, "b": 0.0, "c": 2.0}[kind] + (x - 0.3) ** 2 + (y - 0.7) ** 2


def recipe(window=4, burst=1, search=True):
    steps = (BranchEscape(window=window, burst=burst, n_random=200),)
    if search:
        steps += (AcquisitionSearch(n_random=200),)
    return dataclasses.replace(get_recipe("mondrian"), steps=steps, name=None)


def branch(t):
    return t.params["kind"]


def run(surrogate, n, seed=0, n_initial=4, space=TREE, f=loss):
    opt = Optimizer(space, surrogate=surrogate, random_state=seed, n_initial=n_initial)
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, f(**t.params))
    return opt


def incumbent_branch_before(opt, i):
    done = [t for t in opt.trials[:i] if t.value is not None]
    return branch(min(done, key=lambda t: t.value))


def test_an_escape_follows_every_window_of_proposals_in_the_incumbents_branch():
    window = 4
    opt = run(recipe(window), 30)
    trials = opt.trials
    escapes = [i for i, t in enumerate(trials) if t.origin == "branch"]
    assert escapes, "no escape in 36 proposals"
    for i in escapes:
        # the window before it kept the incumbent's branch, and the escape left it
        best = incumbent_branch_before(opt, i)
        assert [branch(t) for t in trials[i - window:i]] == [best] * window
        assert branch(trials[i]) != best
        assert all(t.origin != "design" for t in trials[i - window:i])
    # and no proposal was an escape when it was not due
    for i, t in enumerate(trials[4 + window:], start=4 + window):
        best = incumbent_branch_before(opt, i)
        if all(branch(s) == best for s in trials[i - window:i]) and \
                all(s.origin != "design" for s in trials[i - window:i]):
            assert t.origin == "branch"
        elif t.origin == "branch":
            pytest.fail(f"trial {i} escaped though not due")
    # a parameter inactive under the chosen value is absent from the proposal
    assert all(("y" in t.params) == (t.params["kind"] == "b") for t in trials)


def test_a_burst_stays_in_the_branch_it_chose_until_it_holds_the_best():
    opt = run(recipe(window=3, burst=3), 32, seed=1)
    trials = opt.trials
    i = 0
    runs = []
    while i < len(trials):
        if trials[i].origin == "branch":
            j = i
            while j < len(trials) and trials[j].origin == "branch":
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    assert runs
    for i, j in runs:
        assert j - i <= 3
        assert len({branch(t) for t in trials[i:j]}) == 1
        if j - i < 3 and j < len(trials):
            # cut short only because the escape's branch now holds the best
            assert incumbent_branch_before(opt, j) == branch(trials[i])


def test_the_escape_finds_a_better_branch_that_the_search_alone_misses():
    """With a design that saw "b" only at poor points, the plain search refines "a"; the
    escape tries "b" again and finds its optimum (a closed-form check of where it went)."""
    design = [{"kind": "a", "x": 0.35}, {"kind": "b", "x": 0.9, "y": 0.0},
              {"kind": "c", "x": 0.3}, {"kind": "b", "x": 0.05, "y": 0.05}]

    def best(surrogate):
        opt = Optimizer(TREE, surrogate=surrogate, random_state=0, n_initial=4)
        for p in design:
            opt.tell(p, loss(**p))
        for _ in range(30):
            t = opt.ask()
            opt.tell(t, loss(**t.params))
        return min(t.value for t in opt.trials), opt

    plain = dataclasses.replace(get_recipe("mondrian"),
                                steps=(AcquisitionSearch(n_random=200),), name=None)
    plain_best, _ = best(plain)
    escape_best, opt = best(recipe(window=4, burst=3))
    assert any(t.origin == "branch" for t in opt.trials)
    assert escape_best < 0.2 <= plain_best


def test_it_passes_without_categorical_parameters_and_on_a_candidate_set():
    opt = run(recipe(search=False), 10, space=SPACE, f=quad)
    assert [t.origin for t in opt.trials[4:]] == ["random"] * 6
    cands = [{"kind": k, "x": x} for k in "abc" for x in (0.1, 0.5, 0.9)]
    opt = Optimizer({"kind": Categorical(["a", "b", "c"]), "x": Real(0.0, 1.0)},
                    surrogate=recipe(window=1, search=False), random_state=0, n_initial=2,
                    candidates=cands)
    for _ in range(6):
        t = opt.ask()
        opt.tell(t, loss(**t.params))
    assert {t.origin for t in opt.trials[2:]} == {"random"}


def test_the_same_proposals_after_a_reopen(tmp_path):
    check_reopen_repeats(TREE, recipe(window=3, burst=2), loss, 14, 3, str(tmp_path / "s.db"),
                         "branch")


@pytest.mark.parametrize("field", ["window", "burst", "n_random"])
def test_a_bad_setting_is_refused(field):
    with pytest.raises((TypeError, ValueError), match=field):
        BranchEscape(**{field: 0})


def test_an_unknown_move_is_refused():
    with pytest.raises(ValueError, match="move"):
        BranchEscape(move="jump")


def test_the_neighbour_move_changes_one_categorical_value_of_the_incumbent():
    """Each neighbour escape is the incumbent with exactly one categorical value changed and
    every parameter active in both kept; one it activates takes its value in the best
    observation where it is active."""
    surrogate = dataclasses.replace(
        recipe(window=3), steps=(BranchEscape(window=3, move="neighbour", n_random=200),
                                 AcquisitionSearch(n_random=200)))
    opt = run(surrogate, 30, seed=2)
    escapes = [i for i, t in enumerate(opt.trials) if t.origin == "branch"]
    assert escapes
    for i in escapes:
        done = [t for t in opt.trials[:i] if t.value is not None]
        inc = min(done, key=lambda t: t.value).params
        new = opt.trials[i].params
        assert new["kind"] != inc["kind"]
        assert new["x"] == pytest.approx(inc["x"])
        if "y" in new and "y" not in inc:
            with_y = [t for t in done if "y" in t.params]
            assert new["y"] == pytest.approx(min(with_y, key=lambda t: t.value).params["y"])


@pytest.mark.parametrize("move", ["random", "parzen"])
def test_the_random_moves_leave_the_incumbents_branch(move):
    surrogate = dataclasses.replace(
        recipe(window=3), steps=(BranchEscape(window=3, move=move),
                                 AcquisitionSearch(n_random=200)))
    opt = run(surrogate, 24, seed=4)
    escapes = [i for i, t in enumerate(opt.trials) if t.origin == "branch"]
    assert escapes
    for i in escapes:
        assert branch(opt.trials[i]) != incumbent_branch_before(opt, i)


def test_the_parzen_move_carries_the_good_values_of_shared_parameters():
    """Every branch is best at x = 0.1, and the observations found that only in the branch
    "a": the Parzen escapes draw x near 0.1 far more often than the uniform ones, and never
    in "a"."""
    from mfbo.proposal.steps.base import Context

    space = {"kind": Categorical(["a", "b", "c", "d"]), "x": Real(0.0, 1.0)}
    opt = Optimizer(space, random_state=0, n_initial=2)
    rng = np.random.default_rng(0)
    for x in (0.1, 0.12, 0.08, 0.11):
        opt.tell({"kind": "a", "x": x}, (x - 0.1) ** 2)
    for kind in "bcd":
        for _ in range(3):
            x = float(0.4 + 0.6 * rng.random())
            opt.tell({"kind": kind, "x": x}, 1.0 + (x - 0.1) ** 2)
    cat = np.array([0])
    best = branch_codes(opt.study.obs.X[0], opt.study.space.levels, cat)
    near = {}
    for move in ("random", "parzen"):
        step = BranchEscape(move=move)
        xs, kinds = [], set()
        for k in range(200):
            ctx = Context(opt.proposer, opt.study, 20 + k, np.random.default_rng([5, k]))
            u, _ = step.random_elsewhere(ctx, cat, best, parzen=move == "parzen")
            params = opt.study.space.from_unit(u[None, :])[0]
            xs.append(params["x"])
            kinds.add(params["kind"])
        assert kinds == {"b", "c", "d"}
        near[move] = float(np.mean(np.abs(np.array(xs) - 0.1) < 0.1))
    # (200 draws each: a standard error of about 0.035)
    assert near["parzen"] > near["random"] + 0.12, near
