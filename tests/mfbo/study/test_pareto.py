"""The Pareto front of a study's trials and its hypervolume history, with maximised
objectives and infeasible trials."""

import numpy as np
import pytest

from mfbo.study.objectives import Objectives
from mfbo.study.pareto import hypervolume_history, pareto_trials
from mfbo.study.trial import Trial


def _trial(i, values, constraints=None, state="complete", end=None):
    return Trial(id=i, params={}, state=state, values=values, constraints=constraints,
                 end=float(i if end is None else end))


def test_the_front_of_minimised_and_maximised_objectives_among_feasible_trials():
    o = Objectives(("minimize", "maximize"), None, ("c",))
    trials = [_trial(0, (1.0, 5.0), (0.0,)),     # front
              _trial(1, (2.0, 4.0), (-1.0,)),    # dominated by 0
              _trial(2, (0.5, 9.0), (1.0,)),     # would dominate, but infeasible
              _trial(3, (3.0, 6.0), (-1.0,)),    # front (larger second value)
              _trial(4, None, None, state="failed"),
              _trial(5, (1.0, 5.0), (-2.0,))]    # equal to 0: both kept
    assert [t.id for t in pareto_trials(trials, o)] == [0, 3, 5]


def test_the_hypervolume_history_in_the_values_units():
    o = Objectives(("minimize", "maximize"))
    trials = [_trial(0, (1.0, 5.0), end=2.0), _trial(1, (2.0, 4.0), end=1.0),
              _trial(2, None, state="failed", end=3.0), _trial(3, (3.0, 6.0), end=4.0)]
    hv = hypervolume_history(trials, o, reference=(4.0, 0.0))  # maximised: 0 is the floor
    # in finishing order (losses: the second value negated, reference (4, 0)): trial 1's
    # box 2 x 4; trial 0 dominates it, 3 x 5; the failure adds nothing; trial 3 adds 1 x 1
    assert list(hv) == pytest.approx([8.0, 15.0, 15.0, 16.0])
    assert np.all(np.diff(hv) >= 0)
    with pytest.raises(ValueError, match="reference must be 2 finite values"):
        hypervolume_history(trials, o, reference=(1.0,))
