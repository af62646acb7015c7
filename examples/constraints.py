"""One objective and a black-box constraint: the constrained Branin function of Gardner et al.
(2014): two of Branin's three minima lie outside the feasible disc, and one, 0.3979 at
(pi, 2.275), inside it.

A constraint is a value the objective returns that must be ``<= 0``; the optimizer models it
with a forest of its own and proposes where it is likely met, and every second proposal fits
quadratics of the loss and the constraint around the best feasible trial and steps to the
least loss they predict feasible; the best trial is the best feasible one.
``outcome_options`` sets the proposal step's other settings: here a second study ranks first
the points that meet the constraint with probability at least one half.

Run: ``python examples/constraints.py`` (a few seconds).
"""

import math

import mfbo
from mfbo import Real


def branin(x1, x2):
    return ((x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2
            + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


def objective(x1, x2):
    # feasible inside the disc of radius sqrt(50) around (2.5, 7.5)
    return {"loss": branin(x1, x2), "disc": (x1 - 2.5) ** 2 + (x2 - 7.5) ** 2 - 50.0}


space = {"x1": Real(-5.0, 10.0), "x2": Real(0.0, 15.0)}
result = mfbo.minimize(objective, space, n_calls=40, random_state=0, progress_bar=False,
                       constraints=["disc"])
df = result.to_dataframe()
print(result)
print(f"feasible trials: {int(df['feasible'].sum())} of {len(df)}")
print(f"best feasible value {result.best_value:.4f} (the constrained optimum: 0.3979)")

bounded = mfbo.minimize(objective, space, n_calls=40, random_state=0, progress_bar=False,
                        constraints=["disc"], outcome_options={"min_feasibility": 0.5})
share = bounded.to_dataframe()["feasible"].mean()
print(f"with min_feasibility=0.5: best feasible {bounded.best_value:.4f}, "
      f"{share:.0%} of the trials feasible")
