"""Stopping bad trials early: a linear classifier trained epoch by epoch with ``partial_fit``
reports its validation loss after each epoch, and a pruner stops the trials that are clearly
worse than the others at the same epoch.

Run: ``python examples/pruning.py`` (a few seconds; writes curves.png where it runs).
"""

import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

import mfbo
from mfbo import Categorical, Real

X, y = load_digits(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_valid = scaler.transform(X_train), scaler.transform(X_valid)
CLASSES = np.unique(y)
EPOCHS = 10


def validation_loss(alpha, eta0, penalty, trial):
    """Train for up to EPOCHS epochs; the validation log loss after the last one.  Declaring
    ``trial`` is what lets the objective report each epoch and ask whether to stop."""
    model = SGDClassifier(loss="log_loss", alpha=alpha, eta0=eta0, penalty=penalty,
                          learning_rate="constant", random_state=0)
    order = np.random.default_rng(0)
    for epoch in range(EPOCHS):
        batch = order.permutation(len(X_train))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.partial_fit(X_train[batch], y_train[batch], classes=CLASSES)
        loss = log_loss(y_valid, model.predict_proba(X_valid), labels=CLASSES)
        trial.report(loss, step=epoch)
        if trial.should_prune():
            raise mfbo.TrialPruned(f"stopped after epoch {epoch}")
    return loss


space = {"alpha": Real(1e-6, 1e-1, log=True), "eta0": Real(1e-4, 1.0, log=True),
         "penalty": Categorical(["l2", "l1"])}
result = mfbo.minimize(validation_loss, space, n_calls=20, random_state=0, progress_bar=False,
                       pruner=mfbo.MedianPruner(n_startup_trials=3, n_warmup_steps=1))

epochs = sum(len(t.intermediate_values) for t in result.trials)
print(f"{result.n_pruned} of {len(result.trials)} trials pruned; {epochs} epochs trained of "
      f"{len(result.trials) * EPOCHS} without pruning")
print(f"best validation log loss {result.best_value:.4f} with {result.best_params}")
print("the first trials' curves:\n", result.intermediate_values().iloc[:5, :6].round(3))
result.plot_intermediate_values("curves.png", title="validation loss by epoch")
