"""Where numba caches the compiled kernels when none of its own places can be written.

numba caches a ``cache=True`` function in ``NUMBA_CACHE_DIR`` when that is set, else beside
its source (``__pycache__``), else in the user's cache directory (``~/.cache/numba``); a place
must be writable to be used, so a read-only install reads no cache from its ``__pycache__``
and writes to the user's directory instead.  Where no place can be written (a read-only install
run by a user without a writable home, as in some containers) numba refuses to define the
function at all (``RuntimeError: cannot cache function ...``), and importing the kernels fails.
:func:`install` adds one last place to numba's list: a private temporary directory of the
process (``tempfile.mkdtemp``, removed at exit), so the kernels compile and run there, cached
for the process only.  Where numba finds a place of its own, nothing changes.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from numba.core import caching

__all__ = ["ProcessCacheLocator", "install"]

_state = {"dir": None, "pid": None}


def _remove(path, pid):
    if os.getpid() == pid:  # not from a forked child: the directory is its parent's
        shutil.rmtree(path, ignore_errors=True)


def _private_dir() -> str:
    if _state["dir"] is None:
        _state["dir"] = tempfile.mkdtemp(prefix="surrogates-numba-")
        _state["pid"] = os.getpid()
        atexit.register(_remove, _state["dir"], _state["pid"])
    return _state["dir"]


class ProcessCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """A numba cache locator for a private temporary directory of the process: the last resort
    after numba's own locators."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(_private_dir(), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            return super().from_function(py_func, py_file)
        except OSError:  # no temporary directory either: numba reports it as before
            return None


def install() -> None:
    """Append :class:`ProcessCacheLocator` to numba's cache locators (once)."""
    classes = caching.CacheImpl._locator_classes
    if ProcessCacheLocator not in classes:
        classes.append(ProcessCacheLocator)


install()
