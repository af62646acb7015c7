"""A Bayesian decision tree fitted by top-down sequential Monte Carlo.

Fits :class:`SMCDecisionTreeClassifier` (Lakshminarayanan, Roy & Teh 2013) on scikit-learn's
breast cancer data with the prior and the one-step optimal proposal, and prints test
accuracy, test log predictive probability, the estimated log marginal likelihood and the fit
time, next to a CART tree.

    python examples/smc_decision_tree.py
"""

import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from surrogates import SMCDecisionTreeClassifier

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

for proposal, n_particles in (("prior", 100), ("optimal", 10)):
    model = SMCDecisionTreeClassifier(n_particles=n_particles, n_islands=5, proposal=proposal,
                                      random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    log_p = np.mean(np.log(proba[np.arange(len(y_test)), y_test]))
    print(f"SMC {proposal:7s} ({model.n_islands} islands x {n_particles:3d} particles): "
          f"accuracy {model.score(X_test, y_test):.3f}, test log p(y|x) {log_p:.3f}, "
          f"log p(Y|X) ~ {model.log_evidence_.mean():.1f}, {model.n_trees_} distinct trees, "
          f"fit {seconds:.2f} s (first call includes compilation)")

cart = DecisionTreeClassifier(min_samples_leaf=10, random_state=0).fit(X_train, y_train)
print(f"CART (min_samples_leaf=10): accuracy {cart.score(X_test, y_test):.3f}")
