"""Where compiled code lives in ``surrogates``: every numba kernel (``@njit``, ``@intrinsic``)
is in a private module named ``_kernels.py`` (a folder with one such module) or
``_<topic>_kernels.py`` (a folder with several), and no other module compiles anything, so
``surrogates/**/_*kernels.py`` lists all of it (see surrogates/README.md)."""

import pathlib
import re

import surrogates

ROOT = pathlib.Path(surrogates.__file__).parent
COMPILED = re.compile(r"^\s*@(njit|numba\.njit|jit|numba\.jit|intrinsic|vectorize|guvectorize)\b",
                      re.MULTILINE)
KERNELS = re.compile(r"^_([a-z]+_)?kernels\.py$")


def test_compiled_code_is_only_in_kernels_modules():
    compiling = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                 if COMPILED.search(p.read_text())}
    named = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py") if KERNELS.match(p.name)}
    assert compiling == named
