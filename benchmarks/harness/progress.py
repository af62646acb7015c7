"""Progress lines of long benchmarks, on stderr so that stdout stays the report."""

from __future__ import annotations

import sys

__all__ = ["progress"]


def progress(source: str, message: str) -> None:
    """Print ``[source] message`` to stderr at once."""
    print(f"[{source}] {message}", file=sys.stderr, flush=True)
