"""Choose a model and its hyper-parameters in one conditional space.

Each model's hyper-parameters exist only when that model is chosen (``when=``), ``degree``
only for the polynomial kernel, ``n_components`` only with PCA; one combination is forbidden.
The objective receives exactly the active parameters, and the results table has NaN where a
parameter is inactive.  Run: ``python examples/conditional_space.py``.
"""

from sklearn.datasets import load_breast_cancer
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mfbo
from mfbo import Categorical, Integer, Real, Space

X, y = load_breast_cancer(return_X_y=True)

space = Space({
    "preprocess": ["scale", "pca"],
    "n_components": Integer(2, 20, when={"preprocess": "pca"}),
    "model": ["logreg", "svm", "forest"],
    "C": Real(1e-3, 1e3, log=True, when={"model": ["logreg", "svm"]}),
    "kernel": Categorical(["rbf", "poly"], when={"model": "svm"}),
    "degree": Integer(2, 4, when={"kernel": "poly"}),
    "n_estimators": Integer(20, 200, step=20, when={"model": "forest"}),
    "max_depth": Integer(2, 12, when={"model": "forest"}),
}, forbidden=[{"preprocess": "pca", "model": "forest"}])  # (say, too slow to be worth it)


def error(preprocess, model, n_components=None, C=None, kernel=None, degree=3,
          n_estimators=None, max_depth=None):
    steps = [StandardScaler()] + ([PCA(n_components)] if preprocess == "pca" else [])
    if model == "logreg":
        est = LogisticRegression(C=C, max_iter=2000)
    elif model == "svm":
        est = SVC(C=C, kernel=kernel, degree=degree)
    else:
        est = RandomForestClassifier(n_estimators=n_estimators, max_depth=max_depth,
                                     random_state=0)
    return 1.0 - cross_val_score(make_pipeline(*steps, est), X, y, cv=3).mean()


if __name__ == "__main__":
    result = mfbo.minimize(error, space, n_calls=30, random_state=0, progress_bar=False)
    print(f"best error {result.best_value:.4f} with {result.best_params}")
    df = result.to_dataframe()
    print(df.groupby("model")["value"].agg(["count", "min"]).round(4).to_string())
    print(df[["model", "C", "kernel", "degree", "n_estimators", "value"]].head(8).to_string())
