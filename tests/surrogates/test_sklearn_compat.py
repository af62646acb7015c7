"""scikit-learn's estimator checks for both Mondrian forests and SMAC's random forest (every
check applies; none is skipped except scikit-learn's own array-API check, which needs
SCIPY_ARRAY_API)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from surrogates import (MondrianForestClassifier, MondrianForestRegressor,
                        SMACRandomForestRegressor)


@parametrize_with_checks([MondrianForestRegressor(n_estimators=5, random_state=0),
                          MondrianForestClassifier(n_estimators=5, random_state=0),
                          SMACRandomForestRegressor(n_estimators=5, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
