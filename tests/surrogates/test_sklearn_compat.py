"""scikit-learn's estimator checks (every check applies; none is skipped)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from surrogates import MondrianForestRegressor


@parametrize_with_checks([MondrianForestRegressor(n_estimators=5, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
