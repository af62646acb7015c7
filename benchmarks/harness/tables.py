"""Markdown tables for benchmark reports."""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["markdown_table"]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table of already formatted cells (each cell is passed through ``str``)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
