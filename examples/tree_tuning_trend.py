"""A linear trend under the forest, for tuning a model's capacity (``trend`` options).

Run: ``python examples/tree_tuning_trend.py``.  A decision tree's cross-validated error on
digits is lowest at a corner of its search space: deep, with the smallest leaves and no
impurity threshold.  A forest's mean is flat beyond its observations, so the forest alone
proposes beside the data; a second forest on what a linear trend in the coordinates leaves
has a mean that goes on falling towards the bounds the error falls to.  In a space with an
integer coordinate the default keeps both and proposes from whichever predicted the last 10
observations better (``trend="if-integers"``, ``trend_window=10``): where an optimum lies
inside the box the trend points past it, and then it is dropped (benchmarks/DEFAULTS.md,
"The linear trend, chosen online").  ``{"trend": False}`` is the forest alone, ``{"trend_window": None}``
the trend always.
"""

from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier

import mfbo

X, y = load_digits(return_X_y=True)
space = {"max_depth": mfbo.Integer(1, 15), "min_samples_split": mfbo.Real(0.01, 0.99),
         "min_samples_leaf": mfbo.Real(0.01, 0.49),
         "min_weight_fraction_leaf": mfbo.Real(0.01, 0.49),
         "max_features": mfbo.Real(0.01, 0.99), "min_impurity_decrease": mfbo.Real(0.0, 0.5)}


def error(**params):
    tree = DecisionTreeClassifier(random_state=0, **params)
    return 1.0 - cross_val_score(tree, X, y, cv=3).mean()


for label, options in (("forest alone", {"trend": False}), ("default", None),
                       ("trend always", {"trend_window": None})):
    best = [mfbo.minimize(error, space, n_calls=60, random_state=seed, progress_bar=False,
                          surrogate_options=options).best_value for seed in range(3)]
    print(f"{label:13s} best cross-validated error after 60 evaluations: "
          + ", ".join(f"{b:.4f}" for b in best))
