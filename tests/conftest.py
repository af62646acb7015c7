"""Fixtures shared by the test modules (plain helpers and constants: ``tests/support.py``)."""

import pytest

from tests import support


@pytest.fixture
def python_run():
    """``python_run(code, timeout, *flags, **env)``: run Python code in a fresh interpreter
    that imports this checkout."""
    return support.run_python
