"""What importing the packages imports: the slow dependencies wait for the call that needs them.

These tests look at ``sys.modules`` of a fresh interpreter, never at times (the times are
measured by ``python -m benchmarks.harness.first_minute``).
"""

import pytest

#: imported by a first call that needs them (a fit, a figure, a DataFrame, a SQL storage),
#: never by ``import mfbo``
SLOW = ("pandas", "matplotlib", "sklearn", "scipy.stats", "scipy.special", "sqlalchemy",
        "numba", "tqdm")


def _loaded_after(python_run, statement: str) -> list:
    proc = python_run(f"""
        import sys
        {statement}
        print(sorted(m for m in {SLOW!r} if m in sys.modules))
        """, 120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split("\n")[0]


@pytest.mark.parametrize("statement", ["import mfbo", "import surrogates",
                                       "import acquisitions"])
def test_importing_a_package_loads_no_slow_dependency(python_run, statement):
    assert _loaded_after(python_run, statement) == "[]"


def test_every_public_name_is_still_importable(python_run):
    proc = python_run("""
        import acquisitions, mfbo, surrogates
        for package in (mfbo, surrogates, acquisitions):
            for name in package.__all__:
                exec(f"from {package.__name__} import {name}")
        print("ok")
        """, 300)
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_the_first_fit_loads_what_it_needs(python_run):
    # the slow modules are deferred, not gone: a model made and asked loads them
    loaded = _loaded_after(python_run, "import mfbo; mfbo.Optimizer({'x': (0.0, 1.0)}).ask()")
    assert "numba" in loaded and "scipy.stats" in loaded
    # the forest speaks scikit-learn's estimator protocol without importing scikit-learn
    assert "sklearn" not in loaded and "pandas" not in loaded and "matplotlib" not in loaded


def test_a_forest_fitted_on_arrays_loads_neither_scikit_learn_nor_scipy(python_run):
    loaded = _loaded_after(python_run, """
        import numpy as np
        from surrogates import MondrianForestRegressor
        X = np.random.default_rng(0).uniform(size=(50, 2))
        m = MondrianForestRegressor(n_estimators=2, random_state=0).fit(X, X.sum(axis=1))
        m.partial_fit(X[:2], X[:2, 0])
        m.predict(X, return_std=True)""")
    assert loaded == "['numba']"
