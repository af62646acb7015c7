"""The BOHB-style method of the multi-fidelity suite (benchmarks/harness/
multi_fidelity_bohb.py): Hyperband's brackets on budgets 1..27, a sampler whose first
configurations are random and whose later ones follow the forest, reproducible for a seed, and
runs that spend the cost they are given and count full budgets only."""

import itertools

import numpy as np
import pytest

from benchmarks.harness import multi_fidelity as bench
from benchmarks.harness.multi_fidelity_bohb import ForestSampler, bohb, brackets
from benchmarks.problems.multi_fidelity import PROBLEMS


def test_the_brackets_are_hyperbands():
    first = [[(27, 1), (9, 3), (3, 9), (1, 27)], [(12, 3), (4, 9), (1, 27)],
             [(6, 9), (2, 27)], [(4, 27)]]
    assert list(itertools.islice(brackets(27), 5)) == first + first[:1]
    assert list(itertools.islice(brackets(9), 3)) == [[(9, 1), (3, 3), (1, 9)],
                                                      [(5, 3), (1, 9)], [(3, 9)]]


def _sampler(seed=0, search="local"):
    p = PROBLEMS["branin-mf"]
    return p, ForestSampler(p.unit_space, p.max_budget, seed, random_fraction=0.0,
                            search=search)


@pytest.mark.parametrize("search", ["local", "candidates"])
def test_the_sampler_follows_the_forest_once_it_has_seen_enough(search):
    p, sampler = _sampler(search=search)
    for _ in range(len(p.space) + 2):  # random until d + 2 configurations were fed
        params = sampler.ask()
        sampler.tell(params, {s: float(v) for s, v in enumerate(p.curve_of(params), 1)})
    assert sampler.rule.forest is not None and len(sampler.units) == len(p.space) + 2
    # the forest's choice: the best expected improvement of its candidates, in the space
    params = sampler.ask()
    assert set(params) == set(p.space) and -5 <= params["x1"] <= 10 and 0 <= params["x2"] <= 15
    again = _sampler(search=search)[1]
    for _ in range(len(p.space) + 2):
        q = again.ask()
        again.tell(q, {s: float(v) for s, v in enumerate(p.curve_of(q), 1)})
    assert again.ask() == params


@pytest.mark.parametrize("method", ["mondrian-bohb", "mondrian-sh-forest"])
def test_a_run_spends_its_cost_and_counts_full_budgets_only(method):
    problem = PROBLEMS["branin-mf"]
    max_cost = 6 * problem.max_budget
    events = bench.METHODS[method](problem, 0, max_cost)
    costs = [c for c, _ in events]
    assert events and costs == sorted(costs) and costs[-1] < max_cost + problem.max_budget
    for _, value in events:
        assert value >= problem.optimum - 1e-9
    assert bench.METHODS[method](problem, 0, max_cost) == events


def test_a_bracket_continues_its_promoted_configurations():
    # the first bracket: 27 x 1 step, then 9 configurations on to 3, 3 on to 9, 1 on to 27
    problem = PROBLEMS["branin-mf"]
    events = bohb(problem, 0, 10 * problem.max_budget)
    assert events[0][0] == 27 + 9 * 2 + 3 * 6 + 18
    assert np.isfinite(events[0][1])
