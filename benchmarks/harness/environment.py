"""The environment record stored with every benchmark result.

:func:`environment` says what a number was measured with: date, command line, Python,
platform, CPU count, numba's thread count, load average, package versions and the git state
of the source tree (commit and modified files).  :func:`save_diff` keeps the uncommitted
changes next to the results, so a result measured on a modified tree can be traced.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

__all__ = ["PACKAGES", "ROOT", "environment", "git", "save_diff", "versions"]

#: the source tree (holding ``benchmarks/``), where git is asked
ROOT = Path(__file__).resolve().parents[2]

#: distributions whose versions every record holds (``None`` when not installed)
PACKAGES = ("mfbo", "numpy", "scipy", "numba", "scikit-learn", "matplotlib")


def versions(*dists: str) -> dict:
    """``{distribution: version or None}``."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in dists:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def git(*args: str) -> str:
    """The output of ``git args`` in :data:`ROOT` (empty when git or the repository is
    missing)."""
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""


def environment(argv: list[str] | None = None, packages: tuple = ()) -> dict:
    """The record: ``date``, ``argv`` (default ``sys.argv``), ``python``, ``platform``
    (machine and OS), ``cpu_count``, ``numba_threads``, ``load_average`` (1, 5 and 15 min),
    ``versions`` (:data:`PACKAGES` and ``packages``), ``git_commit`` and ``git_modified``
    (tracked files with uncommitted changes)."""
    import numba

    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "argv": list(sys.argv if argv is None else argv),
            "python": platform.python_version(),
            "platform": f"{platform.machine()}, {platform.system()} {platform.release()}",
            "cpu_count": os.cpu_count(),
            "numba_threads": numba.get_num_threads(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "versions": versions(*PACKAGES, *packages),
            "git_commit": git("rev-parse", "HEAD"),
            "git_modified": git("status", "--porcelain", "--untracked-files=no").splitlines()}


def save_diff(record: dict, out: str | os.PathLike) -> Path | None:
    """Write ``git diff HEAD`` to ``out/working_tree.diff`` if the record's tree had
    uncommitted changes; return the path written (or ``None``)."""
    if not record.get("git_modified"):
        return None
    path = Path(out) / "working_tree.diff"
    path.write_text(git("diff", "HEAD") + "\n", encoding="utf-8")
    return path
