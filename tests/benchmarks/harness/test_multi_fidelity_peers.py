"""The peers of the multi-fidelity suite that choose budgets (benchmarks/harness/
multi_fidelity_peers.py): DEHB (and SMAC3's Hyperband) run on a tiny problem, spend about the
cost they are given, count only full-budget runs of configurations of the space, write nothing
to the standard output and repeat themselves for a seed."""

import importlib.util

import pytest

from benchmarks.harness import multi_fidelity_peers as peers
from benchmarks.problems.multi_fidelity import PROBLEMS

NEEDS = {"dehb": ("dehb", 'DEHB is not installed: pip install "mfbo[dehb]"'),
         "smac": ("smac", "SMAC3 is not installed (its pyrfr needs building, see .ci/run)")}


def _skip_without(name: str) -> None:
    module, reason = NEEDS[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(reason)


def _check_events(events, problem, max_cost):
    costs = [c for c, _ in events]
    assert events and costs == sorted(costs) and costs[-1] < max_cost + problem.max_budget
    for _, value in events:  # each the full-budget value of a configuration of the space
        assert value >= problem.optimum - 1e-9


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # DEHB's calls of ConfigSpace
def test_dehb_runs_a_few_evaluations_on_a_tiny_problem(capsys):
    _skip_without("dehb")
    problem = PROBLEMS["branin-mf"]
    max_cost = 5 * problem.max_budget  # the first bracket reaches full budget at 4
    events = peers.dehb(problem, 0, max_cost)
    _check_events(events, problem, max_cost)
    assert capsys.readouterr().out == ""
    assert peers.dehb(problem, 0, max_cost) == events
    assert peers.dehb(problem, 1, max_cost) != events


def test_smac_hyperband_runs_a_few_evaluations_on_a_tiny_problem():
    _skip_without("smac")
    problem = PROBLEMS["branin-mf"]
    max_cost = 5 * problem.max_budget
    _check_events(peers.smac("HyperbandFacade")(problem, 0, max_cost), problem, max_cost)
