"""The peers of the ``multi-fidelity`` suite that choose a budget for each run and train it from
scratch (:mod:`benchmarks.harness.multi_fidelity` runs them): SMAC3's facades and DEHB.

Each is driven by its own ask and tell on budgets 1..``max_budget``; a run at budget ``b``
costs ``b`` steps and its loss is the curve's value after ``b`` steps (the peers restart a
configuration at each budget, as they do on real training); the events are the runs at full
budget.  Every peer is seeded: its configuration space is :func:`mfbo.to_configspace`'s with
the run's seed, and the optimizer gets the seed too.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

__all__ = ["smac", "dehb"]


def _params(problem, config) -> dict:
    """A peer's configuration as the problem's parameters (integers as ``int``)."""
    import mfbo

    return {n: (int(v) if isinstance(problem.space[n], mfbo.Integer) else float(v))
            for n, v in dict(config).items()}


def _configspace(problem, seed: int):
    import mfbo

    return mfbo.to_configspace(mfbo.Space(problem.space), seed=seed)


def _loss(problem, params: dict, budget: int) -> float:
    return float(problem.curve_of(params)[budget - 1])


def smac(facade_name: str):
    """A run of SMAC3's facade ``facade_name`` (``HyperbandFacade``, ``MultiFidelityFacade``)
    with its defaults, on budgets 1..``max_budget``."""
    def run(problem, seed: int, max_cost: int) -> list:
        import smac as smac3
        from smac.runhistory.dataclasses import TrialValue

        R = problem.max_budget

        def target(config, seed: int = 0, budget: float = R) -> float:  # (ask and tell only)
            raise RuntimeError("SMAC3 is driven by ask and tell here.")

        with tempfile.TemporaryDirectory(prefix="mfbo-smac-") as tmp:
            scenario = smac3.Scenario(_configspace(problem, seed), deterministic=True,
                                      n_trials=10 ** 6, min_budget=1, max_budget=R, seed=seed,
                                      output_directory=Path(tmp) / "smac3_output")
            facade = getattr(smac3, facade_name)(scenario, target, overwrite=True,
                                                 logging_level=logging.ERROR)
            cost, events = 0, []
            while cost < max_cost:
                info = facade.ask()
                budget = min(max(int(round(info.budget)), 1), R)
                loss = _loss(problem, _params(problem, info.config), budget)
                cost += budget
                facade.tell(info, TrialValue(cost=loss))
                if budget == R:
                    events.append((cost, loss))
        return events
    return run


def dehb(problem, seed: int, max_cost: int) -> list:
    """A run of DEHB (Awad et al. 2021) with the settings its authors recommend (its defaults:
    reduction factor 3, mutation factor 0.5, crossover probability 0.5, ``rand1_bin``; one
    worker), on fidelities 1..``max_budget``.  DEHB logs through loguru: its handlers (a
    file in the run's temporary directory, and the standard output DEHB adds when imported)
    are removed once the optimizer is built, so that a run writes nothing."""
    from dehb import DEHB
    from loguru import logger

    R = problem.max_budget
    with tempfile.TemporaryDirectory(prefix="mfbo-dehb-") as tmp:
        opt = DEHB(cs=_configspace(problem, seed), dimensions=len(problem.space),
                   min_fidelity=1, max_fidelity=R, eta=3, n_workers=1, seed=seed,
                   output_path=tmp, save_freq="end")  # "end": saved by its run(), not here
        logger.remove()
        cost, events = 0, []
        while cost < max_cost:
            job = opt.ask()
            budget = min(max(int(round(job["fidelity"])), 1), R)
            loss = _loss(problem, _params(problem, job["config"]), budget)
            cost += budget
            opt.tell(job, {"fitness": loss, "cost": budget})
            if budget == R:
                events.append((cost, loss))
    return events
