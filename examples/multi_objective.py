"""Two objectives and a constraint: a decision tree's validation error against its size (its
number of leaves), among trees that find at least 95 % of the malignant tumours.

The objective returns a dict with the two objectives and the constraint (``<= 0`` when met);
the result's best trials are the Pareto front of the feasible trials.

Run: ``python examples/multi_objective.py`` (a few seconds; writes front.png where it runs).
"""

from sklearn.datasets import load_breast_cancer
from sklearn.metrics import recall_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

import mfbo
from mfbo import Categorical, Integer, Real

X, y = load_breast_cancer(return_X_y=True)
X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.3, random_state=0)


def evaluate(max_depth, min_samples_leaf, ccp_alpha, criterion):
    tree = DecisionTreeClassifier(max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                                  ccp_alpha=ccp_alpha, criterion=criterion, random_state=0)
    tree.fit(X_train, y_train)
    predicted = tree.predict(X_valid)
    found = recall_score(y_valid, predicted, pos_label=0)  # class 0: malignant
    return {"error_rate": float((predicted != y_valid).mean()), "leaves": tree.get_n_leaves(),
            "missed": 0.95 - found}  # met when at least 95 % are found


space = {"max_depth": Integer(1, 12), "min_samples_leaf": Integer(1, 50, log=True),
         "ccp_alpha": Real(1e-5, 0.05, log=True), "criterion": Categorical(["gini", "entropy"])}
result = mfbo.minimize(evaluate, space, n_calls=40, random_state=0, progress_bar=False,
                       directions={"error_rate": "minimize", "leaves": "minimize"},
                       constraints=["missed"])
print(result)
front = result.pareto_front().sort_values("leaves")
print(front[["id", "error_rate", "leaves", "missed", "max_depth", "min_samples_leaf"]]
      .to_string(index=False))
print("hypervolume below (error 0.2, 60 leaves):",
      round(float(result.hypervolume_history([0.2, 60])[-1]), 3))
print("importance for the error:", result.for_objective("error_rate").importance().main)
result.plot_pareto_front("front.png")
