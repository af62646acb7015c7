"""The figure mfbo's plots return, made without pyplot.

A :class:`Figure` is a matplotlib Figure built directly: no pyplot state, no backend selected
or changed, so the caller's matplotlib setup is untouched in scripts, on headless machines and
in notebooks.  It saves with ``fig.savefig(path)`` and, whatever the backend, shows itself as
a PNG when it is the value of a notebook cell.
"""

from __future__ import annotations

import io
import os

from matplotlib.axes import Axes
from matplotlib.figure import Figure as _MatplotlibFigure

__all__ = ["Figure", "DPI", "new_figure", "target_axes", "finish"]

#: resolution of saved and displayed figures
DPI = 110


class Figure(_MatplotlibFigure):
    """A :class:`matplotlib.figure.Figure` that also has a PNG representation for IPython."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
        return buf.getvalue()


def new_figure(width: float, height: float, **kwargs) -> Figure:
    return Figure(figsize=(width, height), **kwargs)


def target_axes(ax, width: float, height: float):
    """``(figure, axes, owned)``: the caller's ``ax`` and its figure, or a new figure with one
    axes (``owned`` True) when ``ax`` is None."""
    if ax is None:
        fig = new_figure(width, height)
        return fig, fig.subplots(), True
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}.")
    return ax.figure, ax, False


def _root(fig):
    """The top-level figure of a (sub)figure."""
    while getattr(fig, "figure", fig) is not fig and getattr(fig, "figure", None) is not None:
        fig = fig.figure
    return fig


def finish(fig, path=None, owned: bool = True):
    """Lay out a figure made here (a caller's figure is left as it is), save it to ``path``
    when given, and return it."""
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path or None, got {type(path).__name__}.")
    if owned and fig.get_layout_engine() is None:
        fig.tight_layout()
    if path is not None:
        _root(fig).savefig(path, dpi=DPI)
    return fig
