"""Fixtures shared by the test modules (plain helpers and constants: ``tests/support.py``)."""

import pytest

from tests import support


@pytest.fixture
def python_run():
    """``python_run(code, timeout, *flags, **env)``: run Python code in a fresh interpreter
    that imports this checkout."""
    return support.run_python


@pytest.fixture(scope="session")
def boundscheck_cache(tmp_path_factory):
    """A numba cache directory for processes run with ``NUMBA_BOUNDSCHECK=1``, shared by the
    tests of a session: machine code compiled without the checks is never reused there (numba
    does not key its cache on the setting), and what one test compiled with them the next
    loads."""
    return tmp_path_factory.mktemp("numba-boundscheck")
