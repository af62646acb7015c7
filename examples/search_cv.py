"""``MondrianSearchCV``: scikit-learn's hyper-parameter search, proposing with mfbo.

Run: ``python examples/search_cv.py``.  A drop-in for ``RandomizedSearchCV``: a pipeline's
``step__param`` names, any ``scoring``/``refit``/``cv``/``n_jobs``, and the usual
``best_params_``, ``best_estimator_`` and ``cv_results_``; the candidates come one (or
``n_points``) at a time from an online Mondrian forest fitted to the scores so far.
"""

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mfbo import MondrianSearchCV, Real

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

search = MondrianSearchCV(
    Pipeline([("scale", StandardScaler()), ("svc", SVC())]),
    {"svc__C": Real(1e-2, 1e3, log=True), "svc__gamma": Real(1e-5, 1e-1, log=True)},
    n_iter=20, cv=3, random_state=0)
search.fit(X_train, y_train)

print(f"best cross-validated accuracy {search.best_score_:.4f} after "
      f"{len(search.cv_results_['params'])} candidates, at {search.best_params_}")
print(f"held-out accuracy of the refit best pipeline: {search.score(X_test, y_test):.4f}")
