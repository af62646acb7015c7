"""The Mondrian grid (Balog & Teh, 2015): independent 1-D Mondrian processes per dimension,
a ridge model kept up to date as single lifetimes change, and a greedy lifetime search."""

from .._core.exports import lazy_exports

_WHERE = {"MondrianGrid": ".estimator", "GridExploration": ".estimator",
          "_GridState": "._state"}
__all__ = [n for n in _WHERE if not n.startswith("_")]
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
