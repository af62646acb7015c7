"""Fixtures shared by the test modules (plain helpers and constants: ``tests/support.py``)."""

import pytest

from tests import support


@pytest.fixture
def python_run():
    """``python_run(code, timeout, *flags, **env)``: run Python code in a fresh interpreter
    that imports this checkout."""
    return support.run_python


@pytest.fixture
def cpu_act_file():
    """Path of ``cpu_act.csv``; the test is skipped when it is not found locally."""
    if not support.have_data("cpu_act.csv"):
        pytest.skip("cpu_act.csv not found: set MFBO_DATA_DIR to a directory holding it (CI "
                    "uses ../shared/data)")
    from benchmarks import data
    return data.fetch_file("cpu_act.csv", download=False)
