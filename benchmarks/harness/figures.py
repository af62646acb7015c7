"""The one figure style of the benchmark plots, on matplotlib's object API.

``fig, ax = figure(6, 4)`` ... ``save(fig, path)``.  A :class:`~matplotlib.figure.Figure` is
made directly, never through ``pyplot``: no global figure state, no backend to select, and
nothing to close; a PNG is written by ``savefig`` alone.  Every figure uses constrained layout
(room for titles, labels and colour bars without ``tight_layout``) and is saved at :data:`DPI`.
"""

from __future__ import annotations

import os

__all__ = ["DPI", "figure", "save"]

#: resolution of every saved PNG
DPI = 110


def figure(width: float, height: float, nrows: int = 1, ncols: int = 1, **subplots):
    """``(fig, axes)``: a ``width`` x ``height`` inch figure with an ``nrows`` x ``ncols`` grid
    of axes (a single ``Axes`` for 1 x 1 unless ``squeeze=False``; ``subplots`` are passed to
    :meth:`~matplotlib.figure.Figure.subplots`, e.g. ``sharey=True``)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(nrows, ncols, **subplots)


def save(fig, path: str | os.PathLike) -> str:
    """Write ``fig`` to ``path`` (the format from its suffix) at :data:`DPI`; return the path."""
    fig.savefig(path, dpi=DPI)
    return os.fspath(path)
