"""A proposal policy as a list of steps: read the default recipe, change one step, add one.

Run: ``python examples/recipe_steps.py``.  A recipe is a surrogate model, an acquisition, an
initial design and the steps that propose each trial after it, asked in order (the first
that proposes a point decides).  Here the default ``mondrian`` recipe is printed step by
step, then two variations of it are registered under names of their own and run on Branin:
one without its Parzen steps, one that also interleaves random points as SMAC does.
"""

import math

import mfbo
from mfbo.proposal import ParzenStep, RandomInterleave


def branin(x1, x2):
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


default = mfbo.get_recipe("mondrian")
print("the mondrian recipe's policy after its initial design", default.initial_design)
for k, step in enumerate(default.steps, 1):
    print(f"  {k}. {step}")

mfbo.register_surrogate("mondrian-no-parzen", default.without(ParzenStep))
mfbo.register_surrogate("mondrian-interleaved", default.with_step(RandomInterleave(0.2)))

space = {"x1": (-5.0, 10.0), "x2": (0.0, 15.0)}
for name in ("mondrian", "mondrian-no-parzen", "mondrian-interleaved"):
    best = [mfbo.minimize(branin, space, n_calls=30, surrogate=name, random_state=seed,
                          progress_bar=False).best_value for seed in range(2)]
    print(f"{name:22s} best Branin value after 30 evaluations (seeds 0, 1): "
          + ", ".join(f"{b:.3f}" for b in best))
