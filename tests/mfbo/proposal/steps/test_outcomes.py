"""OutcomeSearch: its settings, the method it chooses, and the points it scores."""

import numpy as np
import pytest

from mfbo import Optimizer, Real
from mfbo.proposal.steps import AcquisitionSearch, OutcomeSearch
from mfbo.proposal.steps.base import Context


def test_settings_and_methods():
    assert OutcomeSearch().chosen_method(1) == "ei"
    assert OutcomeSearch().chosen_method(2) == "hvi"
    assert OutcomeSearch().chosen_method(3) == "parego"
    assert OutcomeSearch(method="hvi").chosen_method(4) == "hvi"
    assert isinstance(OutcomeSearch(), AcquisitionSearch)
    with pytest.raises(ValueError, match=r"OutcomeSearch\(method=...\) must be one of"):
        OutcomeSearch(method="nsga")
    with pytest.raises(ValueError, match="n_random"):
        OutcomeSearch(n_random=-1)


def _opt(**kwargs):
    opt = Optimizer({"x": Real(0, 1), "y": Real(0, 1)}, random_state=0, **kwargs)
    for _ in range(12):
        t = opt.ask()
        x, y = t.params["x"], t.params["y"]
        opt.tell(t, {"loss": (x, (1 - x) ** 2 + y), "c": y - 0.5})
    return opt


@pytest.mark.parametrize("method", ["hvi", "parego"])
def test_the_score_prefers_feasible_points_near_the_front(method):
    opt = _opt(directions=["minimize", "minimize"], constraints=["c"], pareto_method=method)
    step = next(s for s in opt.proposer.steps if isinstance(s, OutcomeSearch))
    ctx = Context(opt.proposer, opt.study, opt.study.n_trials, np.random.default_rng(0))
    score = step.scorer(ctx)
    # y = 0 is on the front and feasible; y = 0.95 is dominated and violates the constraint
    good, bad = score(np.array([[0.5, 0.0], [0.5, 0.95]]))
    assert good > bad
    starts = step.starts(ctx)
    Y = opt.study.obs.Y
    feasible_front = {tuple(u) for u, row in zip(opt.study.obs.X, Y) if row[2] <= 0}
    assert {tuple(u) for u in starts} <= feasible_front
