"""``min_distance``: the initial design keeps its distance from asked points too, and a study
that runs out of far-enough points says so."""

from __future__ import annotations

import numpy as np
import pytest

from mfbo import Categorical, Integer, Optimizer, Real, StudyExhausted
from tests.support import SPACE, quad


def max_norm_gaps(U: np.ndarray) -> np.ndarray:
    """Max-norm distance of every pair of rows (the diagonal set to infinity)."""
    d = np.abs(U[:, None, :] - U[None, :, :]).max(axis=2)
    d[np.diag_indices_from(d)] = np.inf
    return d


@pytest.mark.parametrize("design", ["sobol", "random", "lhs"])
def test_initial_design_points_keep_min_distance(design):
    opt = Optimizer(SPACE, random_state=0, n_initial=12, initial_design=design,
                    min_distance=0.15)
    for _ in range(12):  # the initial design only
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    U = np.array([t.unit for t in opt.trials])
    assert max_norm_gaps(U).min() >= 0.15
    # each is a point of the design's sequence: the next one far enough is taken
    design_U = opt.proposer.design_points(12 * 64)
    for u in U:
        assert np.abs(design_U - u).max(axis=1).min() < 1e-12


def test_initial_design_keeps_min_distance_from_pending_and_enqueued_points():
    opt = Optimizer(SPACE, random_state=1, n_initial=8, min_distance=0.2)
    opt.enqueue({"x": 0.0, "y": 0.0})
    batch = opt.ask(8)  # the enqueued point, then 7 design points, all pending together
    U = np.array([t.unit for t in batch])
    assert batch[0].params == {"x": 0.0, "y": 0.0}
    assert max_norm_gaps(U).min() >= 0.2


def test_initial_design_keeps_min_distance_in_a_mixed_space():
    space = {"x": Real(0.0, 1.0), "n": Integer(0, 3), "c": Categorical(["a", "b"])}
    opt = Optimizer(space, random_state=0, n_initial=10, min_distance=0.3)
    for _ in range(10):
        t = opt.ask()
        opt.tell(t, t.params["x"] + t.params["n"])
    assert max_norm_gaps(np.array([t.unit for t in opt.trials])).min() >= 0.3


def test_without_min_distance_the_design_is_the_plain_sequence():
    opt = Optimizer(SPACE, random_state=0, n_initial=8)
    for _ in range(8):
        t = opt.ask()
        opt.tell(t, quad(**t.params))
    U = np.array([t.unit for t in opt.trials])
    np.testing.assert_array_equal(U, opt.proposer.design_points(8)[:8])


@pytest.mark.parametrize("surrogate, n_initial", [("mondrian", 2), ("random", 3),
                                                  ("mondrian", None)])
def test_running_out_of_far_points_names_min_distance(surrogate, n_initial):
    opt = Optimizer({"x": Real(0.0, 1.0)}, surrogate=surrogate, random_state=0,
                    n_initial=n_initial, min_distance=0.4, n_random_candidates=64)
    assert opt.proposer.last_exhaustion_reason is None
    with pytest.raises(StudyExhausted) as info:
        for _ in range(10):
            t = opt.ask()
            opt.tell(t, t.params["x"])
    assert 2 <= opt.n_trials <= 3
    reason = opt.proposer.last_exhaustion_reason
    assert "min_distance=0.4" in reason and "evaluated or pending" in reason
    assert "every candidate" not in reason
    assert str(info.value) == reason


def test_a_used_up_candidate_set_is_still_every_candidate():
    opt = Optimizer({"n": Integer(0, 2)}, random_state=0)
    for _ in range(3):
        t = opt.ask()
        opt.tell(t, float(t.params["n"]))
    with pytest.raises(StudyExhausted, match="every candidate"):
        opt.ask()
    assert opt.proposer.last_exhaustion_reason == \
        "every candidate has been evaluated or is pending."
