"""mfbo: Bayesian optimization with an online Mondrian forest surrogate.

>>> import mfbo
>>> result = mfbo.minimize(lambda x, y: (x - 1) ** 2 + y ** 2,
...                        {"x": (-5.0, 5.0), "y": (-5.0, 5.0)}, n_calls=30,
...                        random_state=0, progress_bar=False)       # doctest: +SKIP
"""

from .api import Objective, minimize, objective
from .models import Model
from .optimizer import Optimizer, StudyExhausted, Trial
from .recipes import RECIPES, Recipe, get_recipe, register_surrogate
from .results import OptimizeResult, plot_convergence
from .space import Categorical, Integer, Real, Space
from .storage import InMemoryStorage, SQLiteStorage
from .study import Study

__version__ = "0.1.0"

#: the named surrogates and their recipes (read-only; add one with :func:`register_surrogate`)
SURROGATES = RECIPES

__all__ = ["Categorical", "Integer", "InMemoryStorage", "Model", "Objective", "OptimizeResult",
           "Optimizer", "RECIPES", "Real", "Recipe", "SQLiteStorage", "SURROGATES", "Space",
           "Study", "StudyExhausted", "Trial", "get_recipe", "minimize", "objective",
           "plot_convergence", "register_surrogate", "__version__"]
