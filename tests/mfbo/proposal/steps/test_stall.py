"""The stall escape: the run of failures it counts, the slots it takes, where its points go,
and where it passes."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from mfbo import Categorical, Integer, Optimizer, Real
from mfbo.proposal import AcquisitionSearch, StallEscape, get_recipe
from mfbo.proposal.steps.stall import exchanges, failures_in_a_row, seen_categories


@pytest.mark.parametrize("y, n_initial, tol, expected", [
    ([3.0, 2.0, 1.0], 3, 1e-3, 0),
    ([3.0, 2.0, 2.0, 2.0], 2, 0.0, 2),
    ([3.0, 2.0, 1.0, 1.5, 0.5, 0.6], 2, 0.0, 1),
    ([1.0, 1.0, 0.9995, 0.999], 1, 1e-3, 3),       # gains within 0.1 % are failures
    ([1.0, 1.0, 0.998, 0.9979], 1, 1e-3, 1),
    ([-1.0, -1.0005, -1.002], 1, 1e-3, 0),        # the margin is of the magnitude
    ([5.0], 0, 1e-3, 0),
])
def test_failures_in_a_row(y, n_initial, tol, expected):
    assert failures_in_a_row(np.array(y), n_initial, tol) == expected


def test_a_run_of_failures_counted_by_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        y = rng.integers(0, 4, size=rng.integers(1, 15)).astype(float)
        n0 = int(rng.integers(0, y.size + 1))
        run = 0
        for i in range(max(n0, 1), y.size):
            run = 0 if y[i] < y[:i].min() else run + 1
        assert failures_in_a_row(y, n0, 0.0) == run


SPACE = {"degree": Integer(1, 3), "kind": Categorical(["a", "b"]), "x": Real(0.0, 1.0)}


def trap(degree, kind, x):
    # degree 3 is a broad poor basin; degree 2 with x near 0.8 is far better
    if degree == 2:
        return 0.1 + 5 * (x - 0.8) ** 2 + (kind == "b")
    return 1.0 + 0.1 * (x - 0.3) ** 2 + 0.5 * (degree == 1) + (kind == "b")


def recipe(window=4):
    steps = (StallEscape(window=window, n_random=300), AcquisitionSearch(n_random=300))
    return dataclasses.replace(get_recipe("mondrian"), steps=steps, name=None)


def run(surrogate, n, seed=0, n_initial=5):
    opt = Optimizer(SPACE, surrogate=surrogate, random_state=seed, n_initial=n_initial)
    for _ in range(n):
        t = opt.ask()
        opt.tell(t, trap(**t.params))
    return opt


def test_escapes_take_every_window_th_failure_and_go_away_from_the_incumbent():
    window = 4
    opt = run(recipe(window), 40)
    trials = opt.trials
    y = np.array([t.value for t in trials])
    space = opt.space
    escape = StallEscape(window=window)
    escapes = [i for i, t in enumerate(trials) if t.origin == "stall"]
    assert escapes
    for i in range(5, len(trials)):
        r = failures_in_a_row(y[:i], 5, escape.tol)
        assert (trials[i].origin == "stall") == (r >= window and r % window == 0)
    for i in escapes:
        inc = trials[int(np.argmin(y[:i]))]
        U = space.to_unit([trials[i].params, inc.params])
        assert escape.away(U[:1], U[1], space.levels)[0]


@pytest.mark.parametrize("max_escapes", [1, 2])
def test_at_most_max_escapes_in_one_run_of_failures(max_escapes):
    window = 2
    escape = StallEscape(window=window, n_random=300, max_escapes=max_escapes)
    opt = run(dataclasses.replace(recipe(), steps=(escape, AcquisitionSearch(n_random=300))),
              40)
    trials = opt.trials
    y = np.array([t.value for t in trials])
    runs = [failures_in_a_row(y[:i], 5, escape.tol) for i in range(5, len(trials))]
    assert max(runs) > max_escapes * window  # a stall long enough for the cap to act
    for i, r in zip(range(5, len(trials)), runs):
        due = window <= r <= max_escapes * window and r % window == 0
        assert (trials[i].origin == "stall") == due
    # without the cap, the same run's first escape beyond it is taken
    free = run(dataclasses.replace(recipe(), steps=(
        StallEscape(window=window, n_random=300), AcquisitionSearch(n_random=300))), 40)
    first = next(i for i, r in zip(range(5, 40), runs) if r > max_escapes * window and
                 r % window == 0)
    assert [t.params for t in free.trials[:first]] == [t.params for t in trials[:first]]
    assert free.trials[first].origin == "stall" and trials[first].origin != "stall"


def test_escapes_between_cells_find_the_basin_the_design_missed():
    # without escapes, 3 of these 8 runs find it
    cells = dataclasses.replace(recipe(), steps=(
        StallEscape(window=4, n_random=300, cells=True), AcquisitionSearch(n_random=300)))
    found = 0
    for seed in range(8):
        opt = run(cells, 30, seed=seed)
        found += min(t.value for t in opt.trials) < 0.5
    assert found >= 6


def test_it_passes_in_a_candidate_set_and_refuses_bad_settings():
    cands = [{"degree": d, "kind": k, "x": x} for d in (1, 3) for k in "ab" for x in (0.1, 0.9)]
    opt = Optimizer(SPACE, surrogate=dataclasses.replace(recipe(1), steps=(
        StallEscape(window=1),)), random_state=0, n_initial=2, candidates=cands)
    for _ in range(6):
        t = opt.ask()
        opt.tell(t, 1.0)
    assert {t.origin for t in opt.trials[2:]} == {"random"}
    with pytest.raises(ValueError, match=r"StallEscape\(window"):
        StallEscape(window=0)
    with pytest.raises(ValueError, match=r"StallEscape\(radius=...\)"):
        StallEscape(radius=1.5)
    with pytest.raises(ValueError, match=r"StallEscape\(tol=...\)"):
        StallEscape(tol=-0.1)
    with pytest.raises(ValueError, match=r"StallEscape\(move=...\)"):
        StallEscape(move="jump")
    with pytest.raises(ValueError, match=r"StallEscape\(move=...\)"):
        StallEscape(move="exchanges")
    with pytest.raises(TypeError, match=r"StallEscape\(cells=...\)"):
        StallEscape(cells=1)
    with pytest.raises(TypeError, match=r"StallEscape\(conditional=...\)"):
        StallEscape(conditional="no")
    with pytest.raises(ValueError, match=r"StallEscape\(max_escapes=...\) must be an integer"):
        StallEscape(max_escapes=-1)
    with pytest.raises(ValueError, match=r"StallEscape\(max_escapes=...\)"):
        StallEscape(max_escapes=1.5)


@pytest.mark.parametrize("cells", [False, True])
def test_random_escapes_go_away_from_the_incumbent(cells):
    escape = StallEscape(window=3, move="random", cells=cells)
    opt = run(dataclasses.replace(recipe(), steps=(escape, AcquisitionSearch(n_random=300))), 30)
    y = np.array([t.value for t in opt.trials])
    moves = [i for i, t in enumerate(opt.trials) if t.origin == "stall"]
    assert moves
    for i in moves:
        U = opt.space.to_unit([opt.trials[i].params, opt.trials[int(np.argmin(y[:i]))].params])
        assert escape.away(U[:1], U[1], opt.space.levels)[0]
        if cells:
            assert (U[0, :2] != U[1, :2]).any()


def test_one_escape_per_batch_and_a_pickled_optimizer_proposes_as_the_original():
    opt = run(recipe(3), 20)
    batch = opt.ask(4)
    assert sum(t.origin == "stall" for t in batch) <= 1
    whole = run(recipe(3), 24, seed=2)
    part = run(recipe(3), 13, seed=2)
    part = pickle.loads(pickle.dumps(part))
    for _ in range(11):
        t = part.ask()
        part.tell(t, trap(**t.params))
    assert [t.params for t in part.trials] == [t.params for t in whole.trials]


def test_exchanges_change_one_discrete_value_at_a_time():
    levels = np.array([-3, 0, 4, -2])
    u = np.array([0.5, 0.37, 0.125, 0.75])  # values 1 of 3, -, level 0 of 4, 1 of 2
    N = exchanges(u, levels)
    expected = [[1 / 6, 0.37, 0.125, 0.75], [5 / 6, 0.37, 0.125, 0.75],
                [0.5, 0.37, 0.375, 0.75], [0.5, 0.37, 0.125, 0.25]]
    np.testing.assert_allclose(N, expected)
    assert exchanges(np.array([0.2, 0.9]), np.array([0, 0])).shape == (0, 2)
    # categorical values only: the integer's two rows gone
    np.testing.assert_allclose(exchanges(u, levels, integers=False),
                               [expected[0], expected[1], expected[3]])
    assert exchanges(np.array([0.2, 0.9]), np.array([0, 5]), integers=False).shape == (0, 2)


def test_a_categorical_exchange_moves_no_integer_and_passes_in_a_space_without_categoricals():
    recipe_ = dataclasses.replace(recipe(), steps=(
        StallEscape(window=4, move="exchange", integers=False), AcquisitionSearch(n_random=300)))
    opt = run(recipe_, 40)
    trials, space = opt.trials, opt.space
    y = np.array([t.value for t in trials])
    moves = [i for i, t in enumerate(trials) if t.origin == "stall"]
    assert moves
    cat = space.levels < 0
    for i in moves:
        U = space.to_unit([trials[i].params, trials[int(np.argmin(y[:i]))].params])
        changed = ~np.isclose(U[0], U[1])
        assert changed.sum() == 1 and cat[changed].all()
    ints = {"x": Real(0.0, 1.0), "k": Integer(1, 9)}
    opt = Optimizer(ints, surrogate=recipe_, random_state=0, n_initial=3)
    for _ in range(16):
        t = opt.ask()
        opt.tell(t, 1.0)
    assert "stall" not in {t.origin for t in opt.trials}
    with pytest.raises(TypeError, match=r"StallEscape\(integers=...\)"):
        StallEscape(integers=1)


def exchange_recipe(window=4):
    return dataclasses.replace(recipe(), steps=(
        StallEscape(window=window, move="exchange"), AcquisitionSearch(n_random=300)))


def test_exchange_escapes_are_the_best_scored_new_neighbour_of_the_incumbent():
    opt = run(exchange_recipe(), 40)
    trials, space = opt.trials, opt.space
    y = np.array([t.value for t in trials])
    moves = [i for i, t in enumerate(trials) if t.origin == "stall"]
    assert moves
    escape = StallEscape(window=4)
    for i in range(5, len(trials)):
        r = failures_in_a_row(y[:i], 5, escape.tol)
        if trials[i].origin == "stall":
            assert r >= 4 and r % 4 == 0
    for i in moves:
        U = space.to_unit([trials[i].params, trials[int(np.argmin(y[:i]))].params])
        neighbours = exchanges(U[1], space.levels)
        assert np.isclose(np.abs(neighbours - U[0]).max(axis=1), 0).any()
        assert trials[i].params not in [t.params for t in trials[:i]]


def test_exchange_passes_without_discrete_coordinates():
    space = {"x": Real(0.0, 1.0), "z": Real(-1.0, 1.0)}
    opt = Optimizer(space, surrogate=exchange_recipe(1), random_state=0, n_initial=3)
    for _ in range(12):
        t = opt.ask()
        opt.tell(t, 1.0)
    assert "stall" not in {t.origin for t in opt.trials}


def test_exchange_in_a_reopened_sqlite_study_proposes_the_same(tmp_path):
    def go(opt, n):
        for _ in range(n):
            t = opt.ask()
            opt.tell(t, trap(**t.params))
        return opt

    whole = go(Optimizer(SPACE, surrogate=exchange_recipe(3), random_state=4, n_initial=5), 26)
    url = f"sqlite:///{tmp_path / 'study.db'}"
    part = go(Optimizer(SPACE, surrogate=exchange_recipe(3), random_state=4, n_initial=5,
                        storage=url, study_name="s"), 12)
    del part
    part = go(Optimizer(SPACE, surrogate=exchange_recipe(3), random_state=4, n_initial=5,
                        storage=url, study_name="s"), 14)
    assert "stall" in {t.origin for t in whole.trials}
    assert [t.params for t in part.trials] == [t.params for t in whole.trials]


def test_exchange_leaves_a_continuous_space_as_the_default_recipe_proposes():
    space = {"x": Real(0.0, 1.0), "z": Real(-1.0, 1.0)}
    default = get_recipe("mondrian")
    steps = (*default.steps[:2], StallEscape(window=2, move="exchange"), *default.steps[2:])
    with_escape = dataclasses.replace(default, steps=steps, name=None)

    def params(surrogate):
        opt = Optimizer(space, surrogate=surrogate, random_state=3, n_initial=4)
        for _ in range(20):
            t = opt.ask()
            opt.tell(t, round(abs(t.params["x"] - 0.4), 1) + t.params["z"] ** 2)
        return [t.params for t in opt.trials]

    assert params(with_escape) == params(default)


@pytest.mark.parametrize("conditional", [True, False])
def test_exchange_in_a_conditional_space_acts_unless_told_to_pass(conditional):
    """With ``conditional=False`` the escape passes in a space with a condition (the default
    recipe's proposals, trial for trial); with True it takes its slots there."""
    space = {"model": Categorical(["a", "b"]), "k": Integer(1, 8),
             "c": Real(0.0, 1.0, when={"model": "a"}), "g": Real(0.0, 1.0, when={"model": "b"})}

    def loss(model, k, c=None, g=None):
        return 1.0 + (0.1 * abs(k - 3) + abs(c - 0.3) if model == "a" else 0.5 + g)

    default = get_recipe("mondrian")
    escape = StallEscape(window=2, move="exchange", conditional=conditional)
    with_escape = dataclasses.replace(default, steps=(*default.steps[:2], escape,
                                                      *default.steps[2:]), name=None)

    def trials(surrogate):
        opt = Optimizer(space, surrogate=surrogate, random_state=2, n_initial=6)
        for _ in range(30):
            t = opt.ask()
            opt.tell(t, loss(**t.params))
        return [(t.params, t.origin) for t in opt.trials]

    escaped = trials(with_escape)
    assert ("stall" in {o for _, o in escaped}) is conditional
    assert (escaped == trials(default)) is not conditional


def test_a_pickle_without_the_conditional_field_reads_its_default():
    # a field added later is missing from an earlier version's pickle: the dataclass's
    # default (a class attribute) stands in for it
    escape = StallEscape(window=3, move="exchange", conditional=False)
    del escape.__dict__["conditional"]  # as an earlier version pickled it
    old = pickle.loads(pickle.dumps(escape))
    assert "conditional" not in old.__dict__ and old.conditional is True


def test_seen_categories_compares_every_categorical_value_at_once():
    levels = np.array([-3, 0, -2, 4])
    X = np.array([[0.5, 0.1, 0.25, 0.1], [0.1, 0.9, 0.75, 0.9]])  # (1, 0) and (0, 1)
    U = np.array([[0.4, 0.7, 0.1, 0.6],    # (1, 0): seen, whatever the other coordinates
                  [0.5, 0.1, 0.75, 0.1],   # (1, 1): not seen
                  [0.9, 0.1, 0.25, 0.1]])  # (2, 0): not seen
    assert seen_categories(U, X, levels).tolist() == [True, False, False]
    assert seen_categories(U, X[:0], levels).tolist() == [False, False, False]
    assert seen_categories(U, X, np.array([0, 0, 5, 4])).all()  # no categorical


def test_a_novel_exchange_goes_only_to_combinations_no_observation_has():
    recipe_ = dataclasses.replace(recipe(), steps=(
        StallEscape(window=2, move="exchange", integers=False, novel=True),
        AcquisitionSearch(n_random=300)))
    space = {"a": Categorical(["p", "q", "r"]), "b": Categorical(["s", "t"]),
             "x": Real(0.0, 1.0)}
    opt = Optimizer(space, surrogate=recipe_, random_state=2, n_initial=3)
    moves = 0
    for _ in range(40):
        X = opt.study.obs.X.copy()
        t = opt.ask()
        if t.origin == "stall":
            moves += 1
            u = opt.space.to_unit([t.params])
            assert not seen_categories(u, X, opt.space.levels)[0]
        opt.tell(t, round(t.params["x"], 1))
    assert moves  # and once every combination is seen, none is left to go to
    assert seen_categories(opt.space.to_unit([dict(a=a, b=b, x=0.5) for a in "pqr"
                                              for b in "st"]), opt.study.obs.X,
                           opt.space.levels).all()
