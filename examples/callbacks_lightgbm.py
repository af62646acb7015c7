"""Stop poor LightGBM trainings early: LightGBMPruningCallback reports the validation loss
after each boosting round to the running trial, and the study's pruner stops the trainings
that are clearly worse than the others after as many rounds.

Run: ``python examples/callbacks_lightgbm.py`` (a few seconds).  Needs
``pip install "mfbo[lightgbm]"``.
"""

import lightgbm as lgb
from sklearn.datasets import make_regression
from sklearn.model_selection import train_test_split

import mfbo
from mfbo.integrations.callbacks.lightgbm import LightGBMPruningCallback

X, y = make_regression(n_samples=1000, n_features=12, n_informative=8, noise=10.0,
                       random_state=0)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.25, random_state=0)
# (feature_pre_filter off: min_data_in_leaf changes from one trial to the next)
DATA = {"feature_pre_filter": False}
train = lgb.Dataset(X_train, y_train, params=DATA)
valid = lgb.Dataset(X_valid, y_valid, reference=train, params=DATA)
ROUNDS = 40


def validation_l2(learning_rate, num_leaves, min_data_in_leaf, trial):
    """The validation mean squared error after the last boosting round; ``trial`` is given
    because the objective declares it, and the callback reports to it."""
    params = {"objective": "regression", "verbose": -1, "num_threads": 1,
              "learning_rate": learning_rate,
              "num_leaves": num_leaves, "min_data_in_leaf": min_data_in_leaf}
    booster = lgb.train(params, train, ROUNDS, valid_sets=[valid],
                        callbacks=[LightGBMPruningCallback(trial, "l2")])
    return booster.best_score["valid_0"]["l2"]


space = {"learning_rate": mfbo.Real(0.005, 0.3, log=True), "num_leaves": mfbo.Integer(4, 64),
         "min_data_in_leaf": mfbo.Integer(5, 60)}
result = mfbo.minimize(validation_l2, space, n_calls=12, random_state=0, progress_bar=False,
                       pruner=mfbo.MedianPruner(n_startup_trials=3, n_warmup_steps=5))
rounds = sum(len(t.intermediate_values) for t in result.trials)
print(f"{result.n_pruned} of {len(result.trials)} trainings pruned; {rounds} boosting rounds "
      f"of {len(result.trials) * ROUNDS} without pruning")
print(f"best validation l2 {result.best_value:.2f} with {result.best_params}")
