"""Model-based pruning: a small neural network trained epoch by epoch, its trials stopped by
an online Mondrian forest over (configuration, epoch).

Run: ``python examples/mlp_pruning.py`` (a few seconds).  Each trial trains a one-layer
``MLPClassifier`` with ``partial_fit`` and reports its validation error after every epoch.
``MondrianPruner`` feeds each reported value to a forest whose inputs are the configuration
and the epoch, and stops a trial once the forest gives it less than a 5 % chance of ending
better than the best finished trial.  Unlike the median rule it can judge a trial from its
neighbours' curves, and where no trial has been it keeps the prior's doubt.
"""

import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

import mfbo
from mfbo import Integer, Real
from mfbo.pruners import MondrianPruner

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, stratify=y,
                                                      random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
CLASSES = np.unique(y)
EPOCHS = 10


def validation_error(width, alpha, lr, trial):
    """Train up to EPOCHS epochs; the validation error after the last one."""
    model = MLPClassifier(hidden_layer_sizes=(width,), alpha=alpha, learning_rate_init=lr,
                          batch_size=64, random_state=0)
    for epoch in range(1, EPOCHS + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.partial_fit(X_train, y_train, classes=CLASSES)
        error = 1.0 - model.score(X_valid, y_valid)
        trial.report(error, step=epoch)
        if trial.should_prune():
            raise mfbo.TrialPruned(f"stopped after epoch {epoch}")
    return error


space = {"width": Integer(4, 64, log=True), "alpha": Real(1e-6, 1e-1, log=True),
         "lr": Real(1e-4, 3e-1, log=True)}
result = mfbo.minimize(validation_error, space, n_calls=20, random_state=0,
                       progress_bar=False,
                       pruner=MondrianPruner(max_resource=EPOCHS, n_startup_trials=4))

epochs = sum(len(t.intermediate_values) for t in result.trials)
print(f"{result.n_pruned} of {len(result.trials)} trials pruned; {epochs} epochs trained of "
      f"{len(result.trials) * EPOCHS} without pruning")
print(f"best validation error {result.best_value:.4f} with {result.best_params}")
