"""mfbo's BOHB-style method of the ``multi-fidelity`` suite: the brackets of Hyperband whose
new configurations an online Mondrian forest over (configuration, budget) proposes -- the
model-based sampling of BOHB (Falkner et al. 2018, "BOHB: robust and efficient
hyperparameter optimization at scale") with mfbo's forest in place of BOHB's density
estimates, fed every value a configuration reports, at every budget.

A bracket of reduction factor ``eta = 3`` on budgets 1..``max_budget`` (27: rungs 1, 3, 9,
27) starts ``n`` new configurations at its lowest rung, trains each to the rung, keeps the best
``1/eta`` of them and trains those on (a promoted configuration continues where it stopped, as
mfbo's pruned methods' trials do, so its cost is the steps it adds), up to ``max_budget``.
Hyperband cycles its brackets from the most aggressive (``n = 27`` at budget 1) to the
least (4 at full budget).  (:data:`benchmarks.harness.multi_fidelity.METHODS` also puts the
sampler in mfbo's asynchronous successive halving: ``mondrian-sh-forest``.)

A new configuration is random until ``d + 2`` configurations have reported, and then with
probability ``random_fraction`` (BOHB's 1/3); otherwise it maximises the forest's expected
improvement at full budget over the best mean the forest gives a configuration that reported:
by ``search="local"``, :func:`acquisitions.maximizers.maximize_random_local` (``n_random``
Sobol points, 500, and a local search from the best five of them and from the best tenth of
the configurations that reported, as mfbo's own proposals search), or by
``search="candidates"``, BOHB's way, the best of ``n_candidates`` (64) candidates, half
uniform in the unit cube and half drawn from that best tenth, each moved by a normal step of
``local_scale`` (0.1) in every unit coordinate.  ``mondrian-sh-forest`` searches locally
(chosen on the dev split, where it did better than the candidates; on the test split both
lose to ``mondrian-sh``, the local search more: see benchmarks/README.md); :func:`bohb` takes
BOHB's candidates (a bracket asks for its first rung's configurations all at once, of one
forest, and the local search finds one point again and again).  A bracket whose
configurations have reached only low budgets thus already informs the next.  The forest is
:class:`mfbo.optimize.pruners.mondrian.CurveForest`'s (budget coordinate
``log(1 + step) / log(1 + max_budget)``, one ``partial_fit`` a reported value).
"""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np

__all__ = ["brackets", "ForestSampler", "bohb"]


def brackets(max_budget: int, eta: int = 3) -> Iterator[list]:
    """Hyperband's brackets, forever: each a list of ``(configurations, budget)`` rungs, the
    budgets ``max_budget * eta^-k`` rounded (its ``s_max + 1`` brackets in turn, from the most
    aggressive)."""
    s_max = int(math.floor(math.log(max_budget) / math.log(eta) + 1e-9))
    while True:
        for s in range(s_max, -1, -1):
            n = int(math.ceil((s_max + 1) / (s + 1) * eta ** s))
            yield [(max(int(n * eta ** -i), 1), int(round(max_budget * eta ** (i - s))))
                   for i in range(s + 1)]


class ForestSampler:
    """New configurations (unit coordinates) proposed by an online Mondrian forest over
    (configuration, budget) fed every reported value (see the module)."""

    def __init__(self, space, max_budget: int, seed: int, random_fraction: float = 1 / 3,
                 n_candidates: int = 64, local_scale: float = 0.1, search: str = "local",
                 n_random: int = 500):
        from mfbo.optimize.pruners.mondrian import CurveForest

        self.space, self.max_budget = space, max_budget
        self.rng = np.random.default_rng(seed)
        self.rule = CurveForest(max_budget, seed=seed)
        self.random_fraction, self.n_candidates = random_fraction, n_candidates
        self.local_scale, self.search, self.n_random = local_scale, search, n_random
        self.units: list[np.ndarray] = []  # the evaluated configurations

    def observe(self, key: int, unit: np.ndarray, values: dict) -> None:
        """Feed the forest the values ``{step: loss}`` of configuration ``key`` not fed yet."""
        from mfbo.optimize.pruners.mondrian import Curve

        if key == len(self.units):
            self.units.append(unit)
        self.rule.feed([Curve(key, unit, dict(values))])

    def _full(self, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = np.hstack([U, np.ones((len(U), 1))])
        return self.rule.forest.predict(X, return_std=True)

    def propose(self) -> np.ndarray:
        """The unit coordinates of a new configuration, snapped to the space."""
        fed = [u for key, u in enumerate(self.units) if self.rule.fed.get(key)]
        if len(fed) < len(self.space) + 2 or self.rng.random() < self.random_fraction:
            U = self.space.sample(1, self.rng)
        else:
            evaluated = np.array(fed)
            mean, _ = self._full(evaluated)
            best = evaluated[np.argsort(mean)[:max(1, len(mean) // 10)]]
            from acquisitions.functions import log_expected_improvement

            incumbent = float(mean.min())

            def score(V):
                m, s = self._full(V)
                return log_expected_improvement(m, s, incumbent)
            if self.search == "local":
                from acquisitions.maximizers import maximize_random_local

                U = maximize_random_local(score, self.space.levels, n=1, rng=self.rng,
                                          n_random=self.n_random, starts=best, n_local=5)
            else:
                half = self.n_candidates // 2
                local = best[self.rng.integers(len(best), size=self.n_candidates - half)]
                local = np.clip(local + self.rng.normal(0.0, self.local_scale, local.shape),
                                0, 1)
                U = np.vstack([self.space.sample(half, self.rng), local])
                U = U[[int(np.argmax(score(U)))]]
        return self.space.to_unit(self.space.from_unit(U))[0]

    def ask(self) -> dict:
        """A new configuration's parameters (:meth:`propose`)."""
        return self.space.from_unit(self.propose()[None, :])[0]

    def tell(self, params: dict, values: dict) -> None:
        """Feed the forest the values ``{step: loss}`` a new configuration ``params``
        reported."""
        self.observe(len(self.units), self.space.to_unit([params])[0], values)


def bohb(problem, seed: int, max_cost: int) -> list:
    """A run of the BOHB-style method (see the module): the events ``(cost, loss)`` of the
    configurations trained to full budget."""
    space, R = problem.unit_space, problem.max_budget
    # BOHB's candidates: a bracket's first rung asks for its configurations all at once, of
    # one forest, where the local search would find one point again and again
    sampler = ForestSampler(space, R, seed, search="candidates")
    cost, events = 0, []
    for bracket in brackets(R, 3):
        alive = []  # (key, unit, curve, values)
        for i, (n, budget) in enumerate(bracket):
            if i == 0:
                for _ in range(n):
                    unit = sampler.propose()
                    params = space.from_unit(unit[None, :])[0]
                    alive.append((len(sampler.units), unit, problem.curve_of(params), {}))
                    sampler.observe(alive[-1][0], unit, {})
            else:
                alive = sorted(alive, key=lambda a: a[3][max(a[3])])[:n]
            for key, unit, curve, values in alive:
                for step in range(len(values) + 1, budget + 1):
                    values[step] = float(curve[step - 1])
                    cost += 1
                    if cost >= max_cost and step < budget:
                        return events
                sampler.observe(key, unit, values)
                if budget == R:
                    events.append((cost, values[R]))
                if cost >= max_cost:
                    return events
    return events  # (never reached: the brackets never end)
