"""The Mondrian kernel (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, 2016): random
features, ridge / Bayesian linear regression on them, and lifetime paths."""

from .._core.exports import lazy_exports

_WHERE = {"MondrianKernel": ".features", "_CellMap": ".features",
          "MondrianKernelRidge": ".ridge", "LifetimePath": ".paths",
          "lifetime_path": ".paths", "forest_lifetime_path": ".paths",
          "lifetime_from_lengthscale": "._common"}
__all__ = [n for n in _WHERE if not n.startswith("_")]
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
