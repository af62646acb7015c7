"""Cross-validation racing in ``MondrianSearchCV``: each candidate is cross-validated fold by
fold, and one whose first folds are worse than the best candidate's on the same folds (or, over
two folds or more, no better) is stopped, as SMAC3's intensification and irace's racing do.

Run: ``python examples/search_cv_racing.py`` (a few seconds).  ``cv_results_`` keeps every
candidate: NaN for the folds a stopped one did not run, ``n_splits_run`` for how many it ran,
and the refit model is the best candidate that ran every fold.
"""

import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mfbo import MondrianSearchCV, Real

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)
space = {"svc__C": Real(1e-3, 1e3, log=True), "svc__gamma": Real(1e-5, 1e1, log=True)}

for racing in (False, True):
    start = time.perf_counter()
    search = MondrianSearchCV(make_pipeline(StandardScaler(), SVC()), space, n_iter=20, cv=5,
                              random_state=0, racing=racing).fit(X_train, y_train)
    results = search.cv_results_
    fits = int(np.sum(results["n_splits_run"])) if racing else 5 * len(results["params"])
    print(f"racing={racing}: {fits} fits of {5 * len(results['params'])}, "
          f"{time.perf_counter() - start:.1f} s; best cross-validated accuracy "
          f"{search.best_score_:.4f}, held-out {search.score(X_test, y_test):.4f}")

stopped = results["n_splits_run"] < 5
print(f"{stopped.sum()} candidates stopped early; the folds they ran: "
      f"{results['n_splits_run'][stopped].tolist()}")
print("split scores of the first stopped one:",
      [round(float(results[f'split{k}_test_score'][np.argmax(stopped)]), 4) for k in range(5)])
