"""The isotropic local step, for a bowl in many real and integer coordinates
(``LocalStep(isotropic=...)`` in the recipe's steps).

Run: ``python examples/mixed_isotropic_step.py``.  A loss that falls towards one point in
four reals and four integers, with a categorical choice that moves the point.  Within 50
evaluations the local quadratic of the reals alone never has enough observations (and
never moves an integer); in a space with an integer of five levels or more the default
fits one curvature shared by the reals and those integers from 2 (c + 2) observations and
steps to its minimum where it is curved and predicts better than a plane
(``isotropic="if-curved"``; benchmarks/DEFAULTS.md, "Isotropic quadratic steps").
``isotropic=False`` is the default before it.
"""

import numpy as np

import mfbo
from mfbo.proposal import LocalStep

space = {**{f"x{i}": mfbo.Real(-10.0, 10.0) for i in range(4)},
         **{f"n{i}": mfbo.Integer(-10, 10) for i in range(4)},
         "kind": mfbo.Categorical(["a", "b", "c"])}
CENTRES = {"a": 3.0, "b": -2.0, "c": 0.0}


def loss(kind, **p):
    r = np.sqrt(np.mean([(v - CENTRES[kind]) ** 2 for v in p.values()]))
    return float(r + (kind != "b"))  # a cone, lowest (0) at -2 with kind "b"


former = mfbo.get_recipe("mondrian").with_settings(LocalStep, isotropic=False)
for label, surrogate in (("without the isotropic step", former), ("default", "mondrian")):
    best = [mfbo.minimize(loss, space, n_calls=50, random_state=seed, progress_bar=False,
                          surrogate=surrogate).best_value for seed in range(3)]
    print(f"{label:27s} best loss after 50 evaluations: "
          + ", ".join(f"{b:.3f}" for b in best))
