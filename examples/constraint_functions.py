"""Constraints as functions of what the objective returns, and crashes modelled as infeasible.

A made-up training run returns its validation error with the memory it used and the seconds
it took; the limits (4 GB, 1.5 s) are not part of the objective, so they are given as
functions of its return: ``constraints={"name": function}``, each giving a value that must be
``<= 0``.  The study records the values (never the functions), so a resumed study does not
call them on its old trials.  Runs with too large a learning rate diverge and raise;
``on_failure="infeasible"`` (the default for a study with constraints, written out here)
models where that happens as one more constraint instead of telling the models that the loss
was the worst one seen there and that every limit was broken.

Run: ``python examples/constraint_functions.py`` (a few seconds).
"""

import math

import mfbo
from mfbo import Integer, Real


def train(lr, width):
    if lr > 0.3:
        raise FloatingPointError("the loss diverged")
    error = 0.05 + 0.3 * (math.log10(lr) + 1.5) ** 2 / 4 + 4.0 / width
    return {"loss": error, "memory_gb": 0.5 + width / 64, "seconds": 0.2 + width / 200}


space = {"lr": Real(1e-4, 1.0, log=True), "width": Integer(8, 512, log=True)}
result = mfbo.minimize(
    train, space, n_calls=40, random_state=0, progress_bar=False, on_failure="infeasible",
    constraints={"memory": lambda r: r["memory_gb"] - 4.0,   # at most 4 GB
                 "time": lambda r: r["seconds"] - 1.5})       # at most 1.5 s
df = result.to_dataframe()
print(result)
print(f"feasible trials: {int(df['feasible'].sum())} of {len(df)}, "
      f"{result.n_failed} diverged")
best = result.best_trial
print(f"best feasible error {best.value:.4f} at lr={best.params['lr']:.3g}, "
      f"width={best.params['width']} (memory {best.extra['memory_gb']:.2f} GB, "
      f"{best.extra['seconds']:.2f} s; the constrained optimum: 0.0679 at lr=0.0316, "
      f"width=224)")
