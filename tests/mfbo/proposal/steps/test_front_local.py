import numpy as np
import pytest

from acquisitions.pareto import chebyshev
from mfbo import Optimizer, Real
from mfbo.proposal.steps import OutcomeSearch
from mfbo.proposal.steps.base import Context
from mfbo.proposal.steps.front_local import dominating_step, draw_centre, front_gaps, \
    front_local_step, scalarised_losses


def _sphere(x, y, z):
    """Two objectives on a quarter circle of radius 1 + g, g the squared distance of (y, z)
    from (0.5, 0.5): the front is g = 0."""
    g = (y - 0.5) ** 2 + (z - 0.5) ** 2
    return (1 + g) * np.cos(x * np.pi / 2), (1 + g) * np.sin(x * np.pi / 2), g


def _study(n=40, constraints=None, keep=lambda x, y, z: True):
    """A study of the two objectives told ``n`` random points (those that ``keep``), with a
    constraint ``x <= 0.5`` if ``constraints``."""
    space = {"x": Real(0, 1), "y": Real(0, 1), "z": Real(0, 1)}
    opt = Optimizer(space, random_state=0, directions=["minimize", "minimize"],
                    constraints=constraints)
    rng = np.random.default_rng(3)
    for _ in range(n):
        x, y, z = rng.random(3)
        if not keep(x, y, z):
            continue
        f1, f2, _ = _sphere(x, y, z)
        values = {"loss": (f1, f2)}
        if constraints:
            values["c"] = x - 0.5
        opt.tell({"x": x, "y": y, "z": z}, values)
    return opt


def test_scalarised_losses_normalise_each_objective_by_its_range():
    L = np.array([[0.0, 10.0], [1.0, 0.0], [0.5, 5.0]])
    w = np.array([0.3, 0.7])
    got = scalarised_losses(L, w)
    assert got == pytest.approx(chebyshev(np.array([[0, 1], [1, 0], [0.5, 0.5]]), w))
    # a constant objective is not divided by zero
    assert np.isfinite(scalarised_losses(np.array([[1.0, 2.0], [1.0, 3.0]]), w)).all()


def test_the_step_moves_a_front_point_towards_the_values_the_front_shares():
    opt = _study()
    g_obs = np.array([_sphere(*u)[2] for u in opt.study.obs.X])
    gains = []
    for number in range(40, 50):
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        point = front_local_step(ctx, 2)
        assert point is not None
        u, _ = point
        assert ctx.is_new(u)
        gains.append(_sphere(*u)[2])
    # far closer to the front than the observations: the steps' median g is under a third of
    # theirs (a uniformly random point's median is about theirs)
    assert np.median(gains) < np.median(g_obs) / 3


def test_the_step_reads_the_feasible_observations_only_and_passes_when_pending():
    opt = _study(constraints=["c"])
    alone = _study(keep=lambda x, y, z: x <= 0.5)  # the feasible ones, without a constraint
    assert 0 < alone.study.obs.n < opt.study.obs.n
    u, _ = front_local_step(Context(opt.proposer, opt.study, 40, np.random.default_rng(0)), 2)
    v, _ = front_local_step(Context(alone.proposer, alone.study, 40,
                                    np.random.default_rng(0)), 2)
    assert np.array_equal(u, v)
    opt.ask()  # a pending trial
    assert front_local_step(Context(opt.proposer, opt.study, 41,
                                    np.random.default_rng(0)), 2) is None


def test_the_outcome_search_takes_the_step_every_local_every_proposals(monkeypatch):
    import mfbo.proposal.steps.search as search

    opt = _study()
    seen = []

    def spy(score, levels, **kwargs):
        seen.append("search")
        return np.random.default_rng(0).random((10, len(levels)))
    monkeypatch.setattr(search, "maximize_random_local", spy)
    n0 = opt.proposer.n_initial
    step = OutcomeSearch(n_random=200, dominating_every=0, mutation_every=0)
    assert OutcomeSearch().local_every == 2  # the default
    points = []
    for number in range(n0, n0 + 4):
        points.append(step.propose(Context(opt.proposer, opt.study, number,
                                           np.random.default_rng(0))))
    # the second and fourth proposals are the local step's, the others the search's
    assert seen == ["search"] * 2
    local = front_local_step(Context(opt.proposer, opt.study, n0 + 1,
                                     np.random.default_rng(0)), 2)
    assert np.array_equal(points[1][0], local[0])
    seen.clear()
    for number in range(n0, n0 + 4):
        OutcomeSearch(n_random=200, local_every=0, dominating_every=0,
                      mutation_every=0).propose(
            Context(opt.proposer, opt.study, number, np.random.default_rng(0)))
    assert seen == ["search"] * 4
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="local_every"):
            OutcomeSearch(local_every=bad)


def _with_an_integer(levels: int, n: int, losses, y_of=None):
    """A study of two objectives over reals ``x``, ``z`` and an integer ``y`` of ``levels``
    levels, told ``n`` random points (``y``: random, or ``y_of(i)``) and their
    ``losses(x, y, z)``."""
    from mfbo import Integer

    space = {"x": Real(0, 1), "y": Integer(0, levels - 1), "z": Real(0, 1)}
    opt = Optimizer(space, random_state=0, directions=["minimize", "minimize"])
    rng = np.random.default_rng(3)
    for i in range(n):
        x, y, z = rng.random(), int(rng.integers(0, levels)), rng.random()
        y = y if y_of is None else y_of(i)
        opt.tell({"x": x, "y": y, "z": z}, {"loss": losses(x, y, z)})
    return opt


def test_the_step_moves_integers_of_five_levels_or_more_only_if_asked():
    opt = _with_an_integer(21, 60, lambda x, y, z: _sphere(x, y / 20, z)[:2])
    X, Y = opt.study.obs.X, opt.study.obs.Y
    moved = {False: 0, True: 0}
    for number in range(60, 70):
        for integers in (False, True):
            ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
            centre = X[np.argmin(scalarised_losses(
                Y[:, :2], ctx.stream("front local").dirichlet(np.ones(2))))]
            u, _ = front_local_step(ctx, 2, integers=integers)
            moved[integers] += u[1] != centre[1]
    assert moved[False] == 0 and moved[True] > 0
    with pytest.raises(TypeError, match="local_integers"):
        OutcomeSearch(local_integers=1)


def _dominating_centre(ctx, Y):
    """The front point :func:`dominating_step` centres on (its stream's first draw)."""
    from acquisitions.pareto import non_dominated

    return int(ctx.stream("dominating step").choice(np.flatnonzero(non_dominated(Y[:, :2]))))


def test_the_dominating_step_pulls_a_front_point_onto_the_front_where_it_lies():
    opt = _study(n=80)
    X, Y = opt.study.obs.X, opt.study.obs.Y
    pulled, kept, before = [], [], []
    for number in range(80, 90):
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        centre = X[_dominating_centre(ctx, Y)]
        point = dominating_step(ctx, 2)
        if point is None:  # (a centre the models see on their front)
            continue
        u, _ = point
        assert ctx.is_new(u)
        before.append(_sphere(*centre)[2])
        pulled.append(_sphere(*u)[2])
        kept.append(abs(u[0] - centre[0]))
    assert len(pulled) >= 5
    # nearer the front than the front points it starts from, at about their position
    assert np.median(pulled) < np.median(before) / 3
    assert np.median(kept) < 0.1


def test_the_dominating_step_passes_without_enough_observations_or_when_pending():
    few = _study(n=30)  # a full quadratic in 3 coordinates: 10 coefficients, 40 needed
    ctx = Context(few.proposer, few.study, 30, np.random.default_rng(0))
    assert dominating_step(ctx, 2) is None
    opt = _study(n=80)
    opt.ask()
    ctx = Context(opt.proposer, opt.study, 81, np.random.default_rng(0))
    assert dominating_step(ctx, 2) is None


def _fallback_steps(opt, numbers, fallback):
    """``(centre, step)`` of each proposal number where the dominating step with ``fallback``
    gives a point (each new) and the step without one gives none."""
    X, Y = opt.study.obs.X, opt.study.obs.Y
    out = []
    for number in numbers:
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        assert dominating_step(ctx, 2) is None
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        centre = X[_dominating_centre(ctx, Y)]
        point = dominating_step(ctx, 2, fallback=fallback)
        if point is not None:
            assert ctx.is_new(point[0])
            out.append((centre, point[0]))
    return out


def test_quadratics_without_cross_terms_pull_onto_the_front_from_fewer_observations():
    opt = _study(n=34)  # squares only in 3 coordinates: 7 coefficients, 28 needed; full: 40
    steps = _fallback_steps(opt, range(34, 44), "squares")
    assert len(steps) >= 5
    before = [_sphere(*centre)[2] for centre, _ in steps]
    pulled = [_sphere(*u)[2] for _, u in steps]
    assert np.median(pulled) < np.median(before) / 3
    few = _study(n=26)
    assert dominating_step(Context(few.proposer, few.study, 26, np.random.default_rng(0)), 2,
                           fallback="squares") is None


def test_with_planes_the_dominating_step_descends_where_quadratics_cannot_be_fitted():
    # two objectives that trade off along x and both fall with y and z: the front is y = z = 0
    space = {"x": Real(0, 1), "y": Real(0, 1), "z": Real(0, 1)}
    opt = Optimizer(space, random_state=0, directions=["minimize", "minimize"])
    rng = np.random.default_rng(5)
    for _ in range(30):  # planes need 16 observations, a full quadratic 40
        x, y, z = rng.random(3)
        opt.tell({"x": x, "y": y, "z": z}, {"loss": (x + y + 0.5 * z, 1 - x + y + 0.5 * z)})
    steps = _fallback_steps(opt, range(30, 40), "plane")
    assert len(steps) >= 5
    for centre, u in steps:
        # both objectives fall: y and z go down, x stays about where it was
        assert u[1] < centre[1] and u[2] < centre[2]
        assert abs(u[0] - centre[0]) < 0.25 * (centre[1] - u[1] + 0.5 * (centre[2] - u[2]))
    with pytest.raises(ValueError, match="dominating_fallback"):
        OutcomeSearch(dominating_fallback="planes")
    from mfbo.proposal.steps.front_local import centred_quadratics
    with pytest.raises(ValueError, match="form"):
        centred_quadratics(opt.space, opt.study.obs.X, opt.study.obs.Y, 0,
                           lambda V, near: V[near], "cubic")


def test_the_dominating_step_moves_only_reals_among_observations_that_share_the_rest():
    def losses(x, y, z):
        f1, f2, _ = _sphere(x, 0.5, z)
        return f1 + 0.1 * y, f2 + 0.1 * y
    opt = _with_an_integer(3, 120, losses)
    X = opt.study.obs.X
    steps = 0
    for number in range(120, 130):
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        centre = X[_dominating_centre(ctx, opt.study.obs.Y)]
        point = dominating_step(ctx, 2)
        if point is not None:
            steps += 1
            assert point[0][1] == centre[1]
    assert steps > 0
    # 20 observations of each level: fewer than the 24 that a quadratic in the two reals
    # (6 coefficients) needs
    few = _with_an_integer(3, 60, losses, y_of=lambda i: i % 3)
    assert all(dominating_step(Context(few.proposer, few.study, n, np.random.default_rng(0)), 2)
               is None for n in range(60, 65))


def test_the_outcome_search_takes_the_dominating_step_where_asked(monkeypatch):
    import mfbo.proposal.steps.outcomes as outcomes

    opt = _study(n=80)
    calls = []

    def spy(ctx, k, centre, fallback=None):
        calls.append(ctx.number - opt.proposer.n_initial)
        centres.append(centre)
        fallbacks.append(fallback)
        return None
    centres, fallbacks = [], []
    monkeypatch.setattr(outcomes, "dominating_step", spy)
    n0 = opt.proposer.n_initial
    default = OutcomeSearch()
    assert (default.dominating_every, default.dominating_in, default.dominating_fallback) == \
        (2, "local", "squares")
    for every, where, slots in ((4, "search", [0, 4]), (4, "local", [3, 7]), (0, "search", [])):
        calls.clear()
        step = OutcomeSearch(n_random=50, dominating_every=every, dominating_in=where)
        for number in range(n0, n0 + 8):
            step.propose(Context(opt.proposer, opt.study, number, np.random.default_rng(0)))
        assert calls == slots
    with pytest.raises(ValueError, match="dominating_every"):
        OutcomeSearch(dominating_every=-1)
    with pytest.raises(ValueError, match="dominating_in"):
        OutcomeSearch(dominating_in="everywhere")
    assert set(centres) == {"gaps"} and set(fallbacks) == {"squares"}  # the defaults
    centres.clear()
    OutcomeSearch(n_random=50, dominating_centre="uniform").propose(
        Context(opt.proposer, opt.study, n0 + 3, np.random.default_rng(0)))
    assert centres == ["uniform"]
    with pytest.raises(ValueError, match="dominating_centre"):
        OutcomeSearch(dominating_centre="crowding")


def test_front_gaps_are_nearest_neighbour_distances_in_range_scaled_losses():
    L = np.array([[0.0, 10.0], [1.0, 9.0], [10.0, 0.0]])  # both ranges 10
    np.testing.assert_allclose(front_gaps(L), [np.sqrt(0.02), np.sqrt(0.02), np.sqrt(1.62)])
    assert front_gaps(L[:1]).tolist() == [1.0]
    np.testing.assert_array_equal(front_gaps(np.array([[1.0, 2.0], [1.0, 2.0]])), [0.0, 0.0])


def test_the_centre_is_drawn_uniformly_or_in_proportion_to_its_gap():
    L = np.array([[0.0, 1.0], [0.05, 0.95], [0.1, 0.9], [1.0, 0.0]])
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    # uniformly: the draws of the dominating step before it had a choice of centre
    assert [draw_centre(a, L) for _ in range(20)] == [int(b.choice(4)) for _ in range(20)]
    rng = np.random.default_rng(1)
    counts = np.bincount([draw_centre(rng, L, "gaps") for _ in range(20_000)], minlength=4)
    gaps = front_gaps(L)
    np.testing.assert_allclose(counts / counts.sum(), gaps / gaps.sum(), atol=0.01)
    assert counts[3] > counts[:3].sum()  # the isolated end of the front
    same = np.zeros((3, 2))  # every gap 0: uniformly
    rng = np.random.default_rng(2)
    assert set(draw_centre(rng, same, "gaps") for _ in range(50)) == {0, 1, 2}


def _front_study(xs, extra=((0.5, 0.1, 0.9),)):
    """A study of the two objectives of :func:`_sphere` told front points at ``x`` in ``xs``
    (``y = z = 0.5``) and the points ``extra`` (off the front)."""
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1), "z": Real(0, 1)}, random_state=0,
                    directions=["minimize", "minimize"])
    for x, y, z in [(x, 0.5, 0.5) for x in xs] + list(extra):
        f1, f2, _ = _sphere(x, y, z)
        opt.tell({"x": x, "y": y, "z": z}, {"loss": (f1, f2)})
    return opt


def test_the_midpoint_step_fills_the_fronts_largest_gap_on_the_front():
    from mfbo.proposal.steps.front_local import midpoint_step

    opt = _front_study([0.0, 0.2, 0.3, 0.9, 1.0])
    u, _ = midpoint_step(Context(opt.proposer, opt.study, 6, np.random.default_rng(0)), 2)
    # the largest gap is between x = 0.3 and 0.9: their midpoint, on the front (g = 0)
    assert u == pytest.approx([0.6, 0.5, 0.5])
    assert _sphere(*u)[2] == pytest.approx(0.0)
    opt.tell({"x": 0.6, "y": 0.5, "z": 0.5}, {"loss": _sphere(0.6, 0.5, 0.5)[:2]})
    v, _ = midpoint_step(Context(opt.proposer, opt.study, 7, np.random.default_rng(0)), 2)
    assert v[0] in (pytest.approx(0.45), pytest.approx(0.75))  # the next largest gap
    opt.ask()  # pending
    assert midpoint_step(Context(opt.proposer, opt.study, 8, np.random.default_rng(0)), 2) \
        is None
    one = _front_study([0.4], extra=((0.5, 0.9, 0.9),))  # a single front point
    assert midpoint_step(Context(one.proposer, one.study, 2, np.random.default_rng(0)), 2) \
        is None


def test_the_midpoint_step_with_three_objectives_pairs_nearest_neighbours():
    from mfbo.proposal.steps.front_local import midpoint_step

    opt = Optimizer({"a": Real(0, 1), "b": Real(0, 1)}, random_state=0,
                    directions=["minimize"] * 3)
    # a front of three objectives (a + b + c = 1 on the simplex): two points close together
    # and one far from both, whose nearest neighbour is farthest of all
    points = [(0.0, 0.0), (0.05, 0.0), (1.0, 0.0)]
    for a, b in points:
        opt.tell({"a": a, "b": b}, {"loss": (a, b, 1 - a - b)})
    u, _ = midpoint_step(Context(opt.proposer, opt.study, 3, np.random.default_rng(0)), 3)
    assert u == pytest.approx([0.525, 0.0])


@pytest.mark.parametrize("name, default, schedules", [
    ("midpoint", 0, ((4, [0, 4]), (2, [0, 2, 4, 6]), (0, []))),
    ("mutation", 4, ((4, [0, 4]), (8, [0]), (0, [])))])
def test_the_outcome_search_takes_the_midpoint_and_mutation_steps_where_asked(
        monkeypatch, name, default, schedules):
    import mfbo.proposal.steps.outcomes as outcomes

    opt = _study(n=60)
    calls = []

    def spy(ctx, k):
        calls.append(ctx.number - opt.proposer.n_initial)
        return None
    monkeypatch.setattr(outcomes, f"{name}_step", spy)
    n0 = opt.proposer.n_initial
    field = f"{name}_every"
    assert getattr(OutcomeSearch(), field) == default
    for every, slots in schedules:
        calls.clear()
        step = OutcomeSearch(n_random=50, **{field: every})
        for number in range(n0, n0 + 8):
            step.propose(Context(opt.proposer, opt.study, number, np.random.default_rng(0)))
        assert calls == slots
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match=field):
            OutcomeSearch(**{field: bad})


def _zdt2_corner_study(n=30):
    """ZDT2 in three coordinates (``f1 = x``, ``f2 = g (1 - (x / g)^2)``, ``g = 1 + 4.5 (y +
    z)``) told the corner ``(0, 0, 0)``, whose ``(0, 1)`` dominates every other trade-off
    off the front, and ``n`` random points: a front of that single point."""
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1), "z": Real(0, 1)}, random_state=0,
                    directions=["minimize", "minimize"])
    rng = np.random.default_rng(2)
    for x, y, z in [(0.0, 0.0, 0.0)] + [tuple(rng.random(3)) for _ in range(n)]:
        g = 1 + 4.5 * (y + z)
        opt.tell({"x": x, "y": y, "z": z}, {"loss": (x, g * (1 - (x / g) ** 2))})
    return opt


def test_the_mutation_step_moves_one_coordinate_of_a_front_point():
    from acquisitions.pareto import non_dominated
    from mfbo.proposal.steps.front_local import mutation_step

    opt = _zdt2_corner_study()
    assert np.flatnonzero(non_dominated(opt.study.obs.Y)).tolist() == [0]
    along = 0
    for number in range(31, 61):
        ctx = Context(opt.proposer, opt.study, number, np.random.default_rng(0))
        u, _ = mutation_step(ctx, 2)
        assert ctx.is_new(u)
        moved = np.flatnonzero(u != 0.0)
        assert moved.size == 1  # one coordinate of the corner, the only front point
        along += moved[0] == 0
    # about a third of them move x: each of those is on the front, and not dominated
    assert 5 <= along <= 17
    ctx = Context(opt.proposer, opt.study, 61, np.random.default_rng(0))
    again = Context(opt.proposer, opt.study, 61, np.random.default_rng(0))
    assert np.array_equal(mutation_step(ctx, 2)[0], mutation_step(again, 2)[0])
    opt.ask()  # pending
    assert mutation_step(Context(opt.proposer, opt.study, 62, np.random.default_rng(0)), 2) \
        is None
