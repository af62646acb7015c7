"""Search a conditional space written with ConfigSpace (``pip install "mfbo[configspace]"``).

Run: ``python examples/configspace_space.py``.  ``mfbo.from_configspace`` maps the
hyperparameters of a ConfigurationSpace, their conditions and its forbidden clauses to an mfbo
space: the objective is called with the active parameters only, and every configuration
proposed is a valid Configuration of the ConfigurationSpace.  ``mfbo.to_configspace`` goes the
other way.
"""

import math

from ConfigSpace import (Categorical, Configuration, ConfigurationSpace, EqualsCondition, Float,
                         ForbiddenAndConjunction, ForbiddenEqualsClause, Integer)

import mfbo

cs = ConfigurationSpace(seed=0)
cs.add(Categorical("model", ["svm", "forest"]),
       Float("C", (1e-3, 1e3), log=True),           # svm only
       Categorical("kernel", ["rbf", "poly"]),      # svm only
       Integer("degree", (2, 5)),                   # poly kernel only
       Integer("n_trees", (10, 500), log=True),     # forest only
       Integer("depth", (2, 12)))                   # forest only
cs.add(EqualsCondition(cs["C"], cs["model"], "svm"),
       EqualsCondition(cs["kernel"], cs["model"], "svm"),
       EqualsCondition(cs["degree"], cs["kernel"], "poly"),
       EqualsCondition(cs["n_trees"], cs["model"], "forest"),
       EqualsCondition(cs["depth"], cs["model"], "forest"),
       ForbiddenAndConjunction(ForbiddenEqualsClause(cs["kernel"], "poly"),
                               ForbiddenEqualsClause(cs["degree"], 5)))

space = mfbo.from_configspace(cs)
print(space)


def error(model, C=None, kernel=None, degree=None, n_trees=None, depth=None):
    """A made-up validation error; each model reads its own parameters."""
    if model == "svm":
        return 0.1 + 0.02 * (math.log10(C) - 1) ** 2 + (
            0.0 if kernel == "rbf" else 0.01 * abs(degree - 3) - 0.005)
    return 0.1 + 0.05 / math.sqrt(n_trees) + 0.002 * (depth - 8) ** 2


result = mfbo.minimize(error, space, n_calls=40, random_state=0, progress_bar=False)
best = Configuration(cs, values=result.best_params)  # ConfigSpace checks the values
print(f"best error {result.best_value:.4f}")
print(best)
print("the same space back from ConfigSpace:",
      mfbo.from_configspace(mfbo.to_configspace(space)) == space)
