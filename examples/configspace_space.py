"""Search a space written with ConfigSpace (``pip install "mfbo[configspace]"``).

Run: ``python examples/configspace_space.py``.  ``mfbo.from_configspace`` maps Float and
Integer (with ``log``), Categorical, Ordinal and Constant hyperparameters to mfbo dimensions;
the parameters proposed are valid values of the ConfigurationSpace.  Conditions and forbidden
clauses are refused with an error naming them.
"""

import math

from ConfigSpace import (Categorical, Configuration, ConfigurationSpace, Constant, Float,
                         Integer, OrdinalHyperparameter)

import mfbo

cs = ConfigurationSpace(seed=0)
cs.add(Float("learning_rate", (1e-4, 1e-1), log=True),
       Integer("n_layers", (1, 5)),
       Categorical("activation", ["relu", "tanh", "gelu"]),
       OrdinalHyperparameter("batch_size", [16, 32, 64, 128]),
       Constant("loss", "cross_entropy"))

space = mfbo.from_configspace(cs)
print(space)


def train(learning_rate, n_layers, activation, batch_size, loss):
    """A made-up validation error."""
    return ((math.log10(learning_rate) + 2.5) ** 2 + 0.05 * (n_layers - 3) ** 2
            + {"relu": 0.0, "tanh": 0.2, "gelu": 0.1}[activation]
            + 0.1 * abs(math.log2(batch_size) - 6))


result = mfbo.minimize(train, space, n_calls=30, random_state=0, progress_bar=False)
best = Configuration(cs, values=result.best_params)  # ConfigSpace checks the values
print(f"best error {result.best_value:.4f}")
print(best)
