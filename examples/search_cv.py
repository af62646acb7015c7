"""``MondrianSearchCV``: scikit-learn's hyper-parameter search, proposing with mfbo.

Run: ``python examples/search_cv.py``.  A drop-in for ``RandomizedSearchCV``: a pipeline's
``step__param`` names, any ``scoring``/``refit``/``cv``/``n_jobs``, and the usual
``best_params_``, ``best_estimator_`` and ``cv_results_``; the candidates come one (or
``n_points``) at a time from an online Mondrian forest fitted to the scores so far.

As for ``RandomizedSearchCV``, a list of dicts searches several sub-spaces: here the pipeline's
classifier is an SVC or a k-nearest-neighbours one, each with its own parameters.  MondrianSearchCV
searches them as one conditional space (the first choice is the dict, and a dict's parameters
exist only under it), so one forest learns from every candidate; a candidate holds only its own
dict's parameters, and ``cv_results_`` masks the others' as scikit-learn does.
"""

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mfbo import Integer, MondrianSearchCV, Real

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

search = MondrianSearchCV(
    Pipeline([("scale", StandardScaler()), ("clf", SVC())]),
    [{"clf": [SVC()], "clf__C": Real(1e-2, 1e3, log=True),
      "clf__gamma": Real(1e-5, 1e-1, log=True)},
     {"clf": [KNeighborsClassifier()], "clf__n_neighbors": Integer(1, 30),
      "clf__weights": ["uniform", "distance"]}],
    n_iter=16, cv=3, random_state=0)
search.fit(X_train, y_train)

results = search.cv_results_
for name in ("SVC", "KNeighborsClassifier"):
    scores = [s for p, s in zip(results["params"], results["mean_test_score"])
              if type(p["clf"]).__name__ == name]
    print(f"{name}: {len(scores)} candidates, best cross-validated accuracy "
          f"{max(scores, default=float('nan')):.4f}")
print(f"best of {len(results['params'])}: {search.best_score_:.4f} at {search.best_params_}")
print(f"held-out accuracy of the refit best pipeline: {search.score(X_test, y_test):.4f}")
