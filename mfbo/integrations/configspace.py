"""A ConfigSpace ``ConfigurationSpace`` as an mfbo :class:`~mfbo.space.Space`.

ConfigSpace is optional: it is imported when a conversion is asked for, never when mfbo is.
"""

from __future__ import annotations

from ..space import Categorical, Integer, Ordinal, Real, Space

__all__ = ["from_configspace"]

INSTALL_HINT = 'install it with: pip install "mfbo[configspace]" (or pip install ConfigSpace)'


def _configspace():
    try:
        import ConfigSpace
    except ImportError as exc:
        raise ImportError(f"mfbo.from_configspace needs the ConfigSpace package; "
                          f"{INSTALL_HINT}.") from exc
    if not hasattr(ConfigSpace.ConfigurationSpace, "forbidden_clauses"):
        raise ImportError(f"mfbo.from_configspace needs ConfigSpace >= 1.0, found "
                          f"{getattr(ConfigSpace, '__version__', 'an older version')}; "
                          f"{INSTALL_HINT}.")
    return ConfigSpace


def _plain(value):
    """A numpy scalar as the Python number it holds (choices are stored as JSON)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) \
        else value


def _dimension(CS, hp):
    name = hp.name
    try:
        if isinstance(hp, CS.Constant):  # UnParametrizedHyperparameter is the same class
            return Categorical([_plain(hp.value)])
        if isinstance(hp, CS.OrdinalHyperparameter):
            return Ordinal([_plain(v) for v in hp.sequence])
        if isinstance(hp, CS.CategoricalHyperparameter):
            return Categorical([_plain(v) for v in hp.choices])
        # uniform, normal and beta alike: their range, searched uniformly
        if isinstance(hp, CS.hyperparameters.IntegerHyperparameter):
            return Integer(int(hp.lower), int(hp.upper), log=bool(hp.log))
        if isinstance(hp, CS.hyperparameters.FloatHyperparameter):
            return Real(float(hp.lower), float(hp.upper), log=bool(hp.log))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"ConfigSpace hyperparameter {name!r} cannot be an mfbo dimension: "
                        f"{exc}") from None
    raise TypeError(f"ConfigSpace hyperparameter {name!r} is a {type(hp).__name__}, which has "
                    f"no mfbo dimension (Float, Integer, Categorical, Ordinal and Constant do).")


def from_configspace(cs) -> Space:
    """The :class:`~mfbo.Space` of a ConfigSpace ``ConfigurationSpace`` ``cs``
    (ConfigSpace >= 1.0, optional).

    Each hyperparameter becomes the dimension of the same name, and the parameters the
    optimizer proposes are valid values of ``cs`` (``Configuration(cs, values=params)``
    accepts them):

    - ``Float`` -> :class:`Real`, ``Integer`` -> :class:`Integer` (``log`` kept);
    - ``Categorical`` -> :class:`Categorical`, ``Ordinal`` -> :class:`Ordinal` (the
      sequence's order kept);
    - ``Constant`` -> a :class:`Categorical` with its one value, so that every parameter
      dict holds it (the coordinate never varies, so the surrogate never splits on it).

    What is not carried over: defaults, the normal and beta distributions of ``Float`` and
    ``Integer`` (the range is searched uniformly, in log space with ``log=True``) and the
    weights of a ``Categorical``.  A space with conditions or forbidden clauses is refused
    with a ``ValueError`` naming them, since every parameter here is always active and every
    combination allowed.  Hyperparameter names must be Python identifiers (``f(**params)``
    is called with them).

    Raises ``ImportError`` when ConfigSpace is not installed
    (``pip install "mfbo[configspace]"``).
    """
    CS = _configspace()
    if not isinstance(cs, CS.ConfigurationSpace):
        raise TypeError(f"cs must be a ConfigSpace ConfigurationSpace, got "
                        f"{type(cs).__name__}.")
    if cs.conditions:
        children = sorted({c.name for cond in cs.conditions for c in _condition_children(cond)})
        raise ValueError(
            f"cs has {len(cs.conditions)} condition(s) making hyperparameter(s) {children} "
            f"conditional, e.g. {str(cs.conditions[0])!r}; mfbo spaces have no conditional "
            f"(inactive) parameters.  Remove the conditions (the objective can ignore a "
            f"parameter that does not apply) or search each branch as its own space.")
    if cs.forbidden_clauses:
        clause = cs.forbidden_clauses[0]
        raise ValueError(
            f"cs has {len(cs.forbidden_clauses)} forbidden clause(s), e.g. {str(clause)!r}; "
            f"mfbo spaces allow every combination.  Remove them and return a failed outcome "
            f"(raise, or return NaN) for a forbidden configuration instead.")
    dims = {}
    for hp in cs.values():
        if not (isinstance(hp.name, str) and hp.name.isidentifier()):
            raise ValueError(f"ConfigSpace hyperparameter {hp.name!r} is not a valid Python "
                             f"identifier, which mfbo parameter names must be (the objective "
                             f"is called as f(**params)).")
        dims[hp.name] = _dimension(CS, hp)
    if not dims:
        raise ValueError("cs has no hyperparameters.")
    return Space(dims)


def _condition_children(cond):
    """The hyperparameters a condition (or a conjunction of conditions) makes conditional."""
    if hasattr(cond, "child"):
        return [cond.child]
    return [c for sub in getattr(cond, "components", ()) for c in _condition_children(sub)]

