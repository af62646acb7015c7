"""A ConfigSpace ``ConfigurationSpace`` as an mfbo :class:`~mfbo.space.Space`, and back.

:func:`from_configspace` maps a ``ConfigurationSpace`` (ConfigSpace >= 1.0) to the space of the
same configurations: its hyperparameters, conditions and forbidden clauses become dimensions,
their ``when=`` conditions and the space's ``forbidden=`` list.  :func:`to_configspace` does
the reverse.  Where ConfigSpace has no word for a thing, an exact equivalent is written if there
is one, else a ``ValueError``/``TypeError`` names the thing.

Both sides agree on which parameters are active and which configurations are forbidden,
following ConfigSpace 1.x as it evaluates them (on its vector of a configuration, where an
inactive hyperparameter is NaN):

- a condition or forbidden clause on an inactive hyperparameter does not hold, as in mfbo, with
  one exception: ``NotEqualsCondition(child, parent, v)`` holds where ``parent`` is inactive
  (``NaN != v``), so ``child`` is active there; :func:`from_configspace` writes it
  ``NotEquals(parent, v) | <parent inactive>``, the negation of ``parent``'s condition spelled
  out with mfbo's conditions (ConfigSpace builds its default configuration on values, where it
  does not hold: it refuses a space whose default leaves such a parent inactive), and
  :func:`to_configspace` writes mfbo's ``NotEquals`` on a conditional parent otherwise;
- comparisons are strict (``LessThanCondition``: ``<``) and an ``Ordinal``'s order is the order
  of its sequence.

ConfigSpace is optional: it is imported when a conversion is asked for, never when mfbo is.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ..space import (AllOf, AnyOf, Between, Categorical, Equals, Greater, In, Integer, Less,
                     NotEquals, Ordinal, Real, Relation, Space, as_space)
from ..space.dimensions import json_key

__all__ = ["from_configspace", "to_configspace"]

INSTALL_HINT = 'install it with: pip install "mfbo[configspace]" (or pip install ConfigSpace)'

#: the most values of a stepped Real or Integer, which becomes an ``OrdinalHyperparameter`` of
#: its values (ConfigSpace checks a sequence's values pairwise: 10,000 take seconds)
MAX_ORDINAL_VALUES = 10_000

#: the key of a hyperparameter's ``meta`` under which :func:`to_configspace` records the stepped
#: Real or Integer an ``OrdinalHyperparameter`` stands for (:func:`from_configspace` reads it)
META_KEY = "mfbo"


def _configspace(function: str):
    try:
        import ConfigSpace
    except ImportError as exc:
        raise ImportError(f"mfbo.{function} needs the ConfigSpace package; "
                          f"{INSTALL_HINT}.") from exc
    if not hasattr(ConfigSpace.ConfigurationSpace, "forbidden_clauses"):
        raise ImportError(f"mfbo.{function} needs ConfigSpace >= 1.0, found "
                          f"{getattr(ConfigSpace, '__version__', 'an older version')}; "
                          f"{INSTALL_HINT}.")
    return ConfigSpace


def _plain(value):
    """A numpy scalar as the Python value it holds (choices are stored as JSON)."""
    return value.item() if isinstance(value, np.generic) else value


def _every(parts, combine):
    """``combine(*parts)``, all of which must hold; None (a part that never holds) makes the
    whole never hold."""
    parts = list(parts)
    if any(p is None for p in parts):
        return None
    return parts[0] if len(parts) == 1 else combine(*parts)


def _some(parts, combine):
    """``combine(*parts)``, one of which must hold; parts that never hold (None) are left
    out, and None is returned when none is left."""
    parts = [p for p in parts if p is not None]
    return None if not parts else parts[0] if len(parts) == 1 else combine(*parts)


def _either(parts):
    """The :class:`AnyOf` of ``parts`` with nested ones flattened, repeats and parts that
    never hold (None) left out (None when none is left)."""
    flat = {}
    for p in parts:
        for q in p.conditions if isinstance(p, AnyOf) else () if p is None else (p,):
            flat.setdefault(repr(q), q)
    return _some(flat.values(), AnyOf)


def _members(name, values):
    """``In(name, values)``, or None (never holds) when ``values`` is empty."""
    return In(name, values) if values else None


def _grid(dim) -> list:
    """The values of a stepped Real or Integer, in order."""
    return dim.from_unit((np.arange(dim.levels) + 0.5) / dim.levels)


def _stepped(dim) -> bool:
    return isinstance(dim, Real) and dim.step is not None or \
        isinstance(dim, Integer) and dim.step != 1


# -- ConfigSpace -> mfbo ---------------------------------------------------------------------------
def from_configspace(cs) -> Space:
    """The :class:`~mfbo.Space` of the configurations of a ConfigSpace ``ConfigurationSpace``
    ``cs`` (ConfigSpace >= 1.0, optional).

    Each hyperparameter becomes the dimension of the same name, and the parameters the
    optimizer proposes are valid configurations of ``cs`` (``Configuration(cs,
    values=params)`` accepts them, inactive hyperparameters left out):

    - ``Float`` -> :class:`Real`, ``Integer`` -> :class:`Integer` (``log`` kept);
    - ``Categorical`` -> :class:`Categorical`, ``Ordinal`` -> :class:`Ordinal` (the
      sequence's order kept), or the stepped :class:`Real`/:class:`Integer` it stands for
      when :func:`to_configspace` made it;
    - ``Constant`` -> a :class:`Categorical` with its one value, so that every parameter
      dict holds it (the coordinate never varies, so the surrogate never splits on it);
    - conditions (``EqualsCondition``, ``NotEqualsCondition``, ``InCondition``,
      ``LessThanCondition``, ``GreaterThanCondition``, ``AndConjunction`` and
      ``OrConjunction``, nested) -> the child's ``when=`` (:class:`Equals`,
      :class:`NotEquals`, :class:`In`, :class:`Less`, :class:`Greater`, :class:`AllOf`,
      :class:`AnyOf`; a comparison on an ``Ordinal`` is the :class:`In` of the values before or
      after the bound; see the module's docstring for ``NotEqualsCondition`` on a conditional
      parent);
    - forbidden clauses (``ForbiddenEqualsClause``, ``ForbiddenInClause``, the ``LessThan``,
      ``LessThanEquals``, ``GreaterThan`` and ``GreaterThanEquals`` clauses, the ``Equals``,
      ``LessThan``, ``GreaterThan``, ``LessThanEquals`` and ``GreaterThanEquals`` relations,
      ``ForbiddenAndConjunction`` and ``ForbiddenOrConjunction``) -> the space's
      ``forbidden=`` (``<=`` is :class:`Between`, as ConfigSpace validates it: ConfigSpace
      1.2's sampler applies ``ForbiddenLessThanEqualsClause`` as ``>=``; a relation with a
      ``Categorical`` or ``Ordinal`` side is spelled out over that side's values; a clause
      that can never hold is left out).

    Dimensions are listed parents first (mfbo's rule), otherwise in ``cs``'s order.  What is
    not carried over: defaults, the normal and beta distributions of ``Float`` and
    ``Integer`` (the range is searched uniformly, in log space with ``log=True``) and the
    weights of a ``Categorical``.  Hyperparameter names must be Python identifiers
    (``f(**params)`` is called with them).

    Raises ``ImportError`` when ConfigSpace is not installed
    (``pip install "mfbo[configspace]"``).
    """
    CS = _configspace("from_configspace")
    if not isinstance(cs, CS.ConfigurationSpace):
        raise TypeError(f"cs must be a ConfigSpace ConfigurationSpace, got "
                        f"{type(cs).__name__}.")
    hps = dict(cs.items())
    if not hps:
        raise ValueError("cs has no hyperparameters.")
    for name in hps:
        if not (isinstance(name, str) and name.isidentifier()):
            raise ValueError(f"ConfigSpace hyperparameter {name!r} is not a valid Python "
                             f"identifier, which mfbo parameter names must be (the objective "
                             f"is called as f(**params)).")
    conditions: dict[str, list] = {}  # ConfigSpace 1.x has one per child; older ones ANDed several
    for cond in cs.conditions:
        conditions.setdefault(cond.child.name, []).append(cond)
    parents = {name: [d.parent.name for c in conditions.get(name, ())
                      for d in getattr(c, "dlcs", (c,))] for name in hps}
    dims: dict = {}
    for name in topological(list(hps), parents):
        when = None
        if name in conditions:
            when = _every((_condition(c, dims) for c in conditions[name]), AllOf)
            if when is None:
                raise ValueError(f"ConfigSpace hyperparameter {name!r} is never active: its "
                                 f"condition {conditions[name]} never holds.")
        dims[name] = _dimension(CS, hps[name], when)
    forbidden = (_forbidden(clause, dims) for clause in cs.forbidden_clauses)
    return Space(dims, forbidden=[f for f in forbidden if f is not None])


def topological(names: list, parents: dict) -> list:
    """``names`` reordered so that each comes after its ``parents[name]``, otherwise in the
    order given (ConfigSpace's own order, by depth, already is; mfbo requires it)."""
    order: dict = {}

    def place(name):
        if name not in order:
            for p in parents.get(name, ()):
                place(p)
            order[name] = None

    for name in names:
        place(name)
    return list(order)


def _dimension(CS, hp, when):
    name = hp.name
    try:
        if isinstance(hp, CS.Constant):  # UnParametrizedHyperparameter is the same class
            return Categorical([_plain(hp.value)], when=when)
        if isinstance(hp, CS.OrdinalHyperparameter):
            sequence = [_plain(v) for v in hp.sequence]
            return _stepped_of(hp, sequence, when) or Ordinal(sequence, when=when)
        if isinstance(hp, CS.CategoricalHyperparameter):
            return Categorical([_plain(v) for v in hp.choices], when=when)
        # uniform, normal and beta alike: their range, searched uniformly
        if isinstance(hp, CS.hyperparameters.IntegerHyperparameter):
            return Integer(int(hp.lower), int(hp.upper), log=bool(hp.log), when=when)
        if isinstance(hp, CS.hyperparameters.FloatHyperparameter):
            return Real(float(hp.lower), float(hp.upper), log=bool(hp.log), when=when)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"ConfigSpace hyperparameter {name!r} cannot be an mfbo dimension: "
                        f"{exc}") from None
    raise TypeError(f"ConfigSpace hyperparameter {name!r} is a {type(hp).__name__}, which has "
                    f"no mfbo dimension (Float, Integer, Categorical, Ordinal and Constant do).")


def _stepped_of(hp, sequence, when):
    """The stepped Real or Integer an Ordinal made by :func:`to_configspace` stands for (its
    ``meta`` says which, and its sequence must be that dimension's values), else None."""
    spec = (hp.meta or {}).get(META_KEY)
    if not isinstance(spec, dict) or spec.get("type") not in ("real", "integer"):
        return None
    try:
        kind = Real if spec["type"] == "real" else Integer
        dim = kind(spec["low"], spec["high"], step=spec["step"], when=when)
    except (KeyError, TypeError, ValueError):
        return None
    return dim if dim.levels == len(sequence) and _grid(dim) == sequence else None


#: ConfigSpace's comparisons of a hyperparameter with a value, by class name
_CONDITION_OPS = {"LessThanCondition": "<", "GreaterThanCondition": ">"}
_CLAUSE_OPS = {"ForbiddenLessThanClause": "<", "ForbiddenGreaterThanClause": ">",
               "ForbiddenLessThanEqualsClause": "<=",
               "ForbiddenGreaterThanEqualsClause": ">="}
#: ... and of two hyperparameters (ForbiddenLessThanEqualsRelation subclasses
#: ForbiddenLessThanRelation, so classes are told apart by name)
_RELATION_OPS = {"ForbiddenEqualsRelation": "==", "ForbiddenLessThanRelation": "<",
                 "ForbiddenGreaterThanRelation": ">", "ForbiddenLessThanEqualsRelation": "<=",
                 "ForbiddenGreaterThanEqualsRelation": ">="}
_OPS = {"==": operator.eq, "<": operator.lt, ">": operator.gt, "<=": operator.le,
        ">=": operator.ge}
_SWAPPED = {"==": "==", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def _condition(cond, dims):
    """The mfbo condition of a ConfigSpace condition or conjunction (None: never holds)."""
    kind = type(cond).__name__
    if kind in ("AndConjunction", "OrConjunction"):
        parts = [_condition(c, dims) for c in cond.components]
        return _every(parts, AllOf) if kind == "AndConjunction" else _some(parts, AnyOf)
    name = cond.parent.name
    if kind == "EqualsCondition":
        return Equals(name, _plain(cond.value))
    if kind == "NotEqualsCondition":  # NaN != value: it holds where the parent is inactive
        return _either([NotEquals(name, _plain(cond.value)), _inactive(name, dims)])
    if kind == "InCondition":
        return In(name, [_plain(v) for v in cond.values])
    if kind in _CONDITION_OPS:
        return _compared(name, dims[name], _CONDITION_OPS[kind], _plain(cond.value))
    raise TypeError(f"ConfigSpace condition {cond} is a {kind}, which from_configspace cannot "
                    f"map (it maps the Equals, NotEquals, In, LessThan and GreaterThan "
                    f"conditions and the And and Or conjunctions).")


def _forbidden(clause, dims):
    """The mfbo condition of a ConfigSpace forbidden clause (None: never holds)."""
    kind = type(clause).__name__
    if kind in ("ForbiddenAndConjunction", "ForbiddenOrConjunction"):
        parts = [_forbidden(c, dims) for c in clause.components]
        return _every(parts, AllOf) if kind == "ForbiddenAndConjunction" \
            else _some(parts, AnyOf)
    if kind in _RELATION_OPS:
        return _relation(clause, _RELATION_OPS[kind], dims)
    if kind == "ForbiddenEqualsClause":
        return Equals(clause.hyperparameter.name, _plain(clause.value))
    if kind == "ForbiddenInClause":
        return In(clause.hyperparameter.name, [_plain(v) for v in clause.values])
    if kind in _CLAUSE_OPS:
        name = clause.hyperparameter.name
        return _compared(name, dims[name], _CLAUSE_OPS[kind], _plain(clause.value))
    raise TypeError(f"ConfigSpace forbidden clause {clause} is a {kind}, which "
                    f"from_configspace cannot map (it maps the Equals, In, LessThan(Equals) "
                    f"and GreaterThan(Equals) clauses and relations and the And and Or "
                    f"conjunctions).")


def _compared(name, dim, op, value):
    """``name op value`` for a numeric or Ordinal dimension (an Ordinal's order is its
    sequence's, as in ConfigSpace)."""
    if isinstance(dim, (Real, Integer)):
        if op in ("<", ">"):
            return (Less if op == "<" else Greater)(name, value)
        return Between(name, value, None) if op == ">=" else Between(name, None, value)
    i = dim.index(value)
    return _members(name, {"<": dim.choices[:i], ">": dim.choices[i + 1:],
                           "<=": dim.choices[:i + 1], ">=": dim.choices[i:]}[op])


def _against(name, dim, op, value):
    """``name op value`` for any dimension, compared as Python compares values (how
    ConfigSpace compares the two sides of a relation)."""
    if isinstance(dim, Categorical):
        return _members(name, [c for c in dim.choices if _OPS[op](c, value)])
    if isinstance(value, bool):
        value = int(value)  # (True == 1 in Python)
    if not isinstance(value, (int, float)):
        if op == "==":
            return None
        raise TypeError(f"{value!r} cannot be ordered against the numbers of {name!r}.")
    return Between(name, value, value) if op == "==" else _compared(name, dim, op, value)


def _relation(clause, op, dims):
    """``left op right`` of a ConfigSpace forbidden relation: a :class:`Relation` between
    numbers, else spelled out over the values of a Categorical or Ordinal side."""
    left, right = clause.left.name, clause.right.name
    a, b = dims[left], dims[right]
    try:
        if not isinstance(a, Categorical) and not isinstance(b, Categorical):
            return Relation(left, op, right)
        if isinstance(a, Categorical):
            return _some((_every([Equals(left, x), _against(right, b, _SWAPPED[op], x)], AllOf)
                          for x in a.choices), AnyOf)
        return _some((_every([Equals(right, y), _against(left, a, op, y)], AllOf)
                      for y in b.choices), AnyOf)
    except TypeError as exc:
        raise TypeError(f"ConfigSpace forbidden clause {clause} compares values that cannot be "
                        f"ordered: {exc}") from None


def _inactive(name, dims):
    """The condition under which dimension ``name`` is inactive (None: never)."""
    when = dims[name].when
    return None if when is None else _negation(when, dims)


def _negation(cond, dims):
    """The condition that holds exactly where ``cond`` does not (None: nowhere); a leaf does
    not hold where its parent is inactive, so its negation holds there."""
    if isinstance(cond, (AllOf, AnyOf)):
        parts = [_negation(c, dims) for c in cond.conditions]
        return _either(parts) if isinstance(cond, AllOf) else _every(parts, AllOf)
    name, dim = cond.name, dims[cond.name]
    if isinstance(cond, NotEquals):
        other = Equals(name, cond.value)
    elif isinstance(cond, Equals):
        other = NotEquals(name, cond.value)
    elif isinstance(cond, In):
        out = {json_key(v) for v in cond.values}
        other = _members(name, [c for c in dim.choices if json_key(c) not in out]) \
            if isinstance(dim, Categorical) else \
            _every([NotEquals(name, v) for v in cond.values], AllOf)
    elif isinstance(cond, Less):
        other = Between(name, cond.value, None)
    elif isinstance(cond, Greater):
        other = Between(name, None, cond.value)
    elif isinstance(cond, Between):
        other = _either([None if cond.low is None else Less(name, cond.low),
                         None if cond.high is None else Greater(name, cond.high)])
    else:  # (conditions from ConfigSpace hold only these)
        raise TypeError(f"cannot negate {cond!r}.")
    return _either([other, _inactive(name, dims)])


# -- mfbo -> ConfigSpace ---------------------------------------------------------------------------
def to_configspace(space, *, seed=None):
    """The ConfigSpace ``ConfigurationSpace`` of the configurations of an mfbo ``space`` (a
    :class:`~mfbo.Space` or the dict one is made of), seeded with ``seed``.

    - :class:`Real` -> ``Float``, :class:`Integer` -> ``Integer`` (``log`` kept);
      :class:`Categorical` -> ``Categorical`` (``Constant`` when it has one choice),
      :class:`Ordinal` -> ``OrdinalHyperparameter``;
    - a stepped :class:`Real` or :class:`Integer` (ConfigSpace 1.x has no ``q``) -> an
      ``OrdinalHyperparameter`` of its values (at most :data:`MAX_ORDINAL_VALUES`), whose
      ``meta["mfbo"]`` records the dimension so that :func:`from_configspace` gives it back;
    - a dimension's ``when=`` -> its condition: :class:`Equals`, :class:`In` and
      :class:`Less`/:class:`Greater` with a bound in the parent's range are the ConfigSpace
      condition of the same name, :class:`AllOf`/:class:`AnyOf` an ``And``/``OrConjunction``;
      :class:`NotEquals` on an always-active parent is a ``NotEqualsCondition``, on a
      conditional one (where ConfigSpace's would also hold with the parent inactive) the
      ``InCondition`` of the other values, or ``< v || > v`` for a number; :class:`Between`
      and bounds ConfigSpace refuses (outside the range, a fraction for an integer) are written
      with the exact ``>``, ``<`` and ``==`` conditions;
    - the space's ``forbidden=`` -> forbidden clauses, likewise (a :class:`Relation` is the
      forbidden relation of its operator, ``!=`` between numbers ``< || >``; a condition
      that can never hold forbids nothing and is left out).

    Refused, with an error naming the dimension or clause: a :class:`Relation` in a
    ``when=`` (ConfigSpace conditions compare a parent with constants only), a ``when=`` that
    never holds, a ``!=`` :class:`Relation` between non-numbers, and choices ConfigSpace
    takes for equal (``1`` and ``True``).  Defaults are ConfigSpace's own, unless that
    configuration is forbidden (ConfigSpace refuses a space whose default is): then those of
    an allowed configuration of ``space``.  ``ForbiddenOrConjunction`` and the ``<``/``>``
    clauses need ConfigSpace >= 1.2.

    Raises ``ImportError`` when ConfigSpace is not installed
    (``pip install "mfbo[configspace]"``).
    """
    CS = _configspace("to_configspace")
    space = as_space(space)
    dims = space.dimensions
    hps = {name: _hyperparameter(CS, name, dim) for name, dim in dims.items()}
    for name, value in _defaults(space, hps).items():
        hps[name] = _hyperparameter(CS, name, dims[name], default=value)
    items = list(hps.values())
    for name, dim in dims.items():
        if dim.when is not None:
            what = f"the condition {dim.when!r} of {name!r}"
            cond = _to_cs(dim.when, _ConditionWords(CS, hps[name], what), hps, space)
            if cond is None:
                raise ValueError(f"{what} never holds, so {name!r} is never active, which "
                                 f"ConfigSpace cannot express; leave {name!r} out.")
            items.append(cond)
    for i, f in enumerate(space.forbidden):
        clause = _to_cs(f, _ForbiddenWords(CS, f"forbidden[{i}] = {f!r}"), hps, space)
        if clause is not None:
            items.append(clause)
    cs = CS.ConfigurationSpace(seed=seed)
    cs.add(items)
    return cs


def _hyperparameter(CS, name, dim, **default):
    """The ConfigSpace hyperparameter of dimension ``name`` (``default=`` its default)."""
    ordinal_default = {"default_value": default["default"]} if default else {}
    try:
        if _stepped(dim):
            if dim.levels > MAX_ORDINAL_VALUES or dim.levels == 0:
                raise ValueError(f"its step makes more than {MAX_ORDINAL_VALUES} values for "
                                 f"the OrdinalHyperparameter it becomes (ConfigSpace 1.x has no "
                                 f"q); use a larger step or none.")
            spec = {k: v for k, v in dim.to_json().items() if k != "when"}
            return CS.OrdinalHyperparameter(name, _grid(dim), meta={META_KEY: spec},
                                            **ordinal_default)
        if isinstance(dim, Real):
            return CS.Float(name, (dim.low, dim.high), log=dim.log, **default)
        if isinstance(dim, Integer):
            return CS.Integer(name, (dim.low, dim.high), log=dim.log, **default)
        if isinstance(dim, Ordinal):
            return CS.OrdinalHyperparameter(name, list(dim.choices), **ordinal_default)
        if len(dim.choices) == 1:
            return CS.Constant(name, dim.choices[0])
        return CS.Categorical(name, list(dim.choices), **default)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"dimension {name!r} ({dim!r}) cannot be a ConfigSpace "
                        f"hyperparameter: {exc}") from None


def _defaults(space, hps) -> dict:
    """``{}`` when the configuration of ConfigSpace's defaults is allowed in ``space``, else
    the parameters of an allowed configuration, to be the defaults."""
    params = {}
    for name, dim in space.dimensions.items():
        if dim.when is None or dim.when.holds(params):
            params[name] = dim.validate(name, _plain(hps[name].default_value))
    if not any(f.holds(params) for f in space.forbidden):
        return {}
    return space.from_unit(space.sample(1, np.random.default_rng(0)))[0]


class _ConditionWords:
    """ConfigSpace's conditions of ``child``, as :func:`_to_cs` asks for them."""

    def __init__(self, CS, child, what):
        self.CS, self.child, self.what = CS, child, what

    def eq(self, P, v):
        return self.CS.EqualsCondition(self.child, P, v)

    def ne(self, P, v):
        return self.CS.NotEqualsCondition(self.child, P, v)

    def isin(self, P, values):
        return self.CS.InCondition(self.child, P, values)

    def lt(self, P, v):
        return self.CS.LessThanCondition(self.child, P, v)

    def gt(self, P, v):
        return self.CS.GreaterThanCondition(self.child, P, v)

    def all(self, parts):
        return _every(parts, self.CS.AndConjunction)

    def any(self, parts):
        return _some(parts, self.CS.OrConjunction)

    def relation(self, cond, hps, space):
        raise ValueError(f"{self.what} compares two dimensions, which a ConfigSpace condition "
                         f"cannot (it compares a parent with constants).")


class _ForbiddenWords:
    """ConfigSpace's forbidden clauses, as :func:`_to_cs` asks for them."""

    _RELATIONS = {"==": "ForbiddenEqualsRelation", "<": "ForbiddenLessThanRelation",
                  ">": "ForbiddenGreaterThanRelation", "<=": "ForbiddenLessThanEqualsRelation",
                  ">=": "ForbiddenGreaterThanEqualsRelation"}
    ne = None  # (there is no forbidden != clause)

    def __init__(self, CS, what):
        self.CS, self.what = CS, what

    def _cls(self, name):
        cls = getattr(self.CS, name, None)
        if cls is None:
            raise ValueError(f"{self.what} needs ConfigSpace's {name}, which ConfigSpace "
                             f"{getattr(self.CS, '__version__', '')} lacks (ConfigSpace >= 1.2 "
                             f"has it).")
        return cls

    def eq(self, P, v):
        return self.CS.ForbiddenEqualsClause(P, v)

    def isin(self, P, values):
        return self.CS.ForbiddenInClause(P, values)

    def lt(self, P, v):
        return self._cls("ForbiddenLessThanClause")(P, v)

    def gt(self, P, v):
        return self._cls("ForbiddenGreaterThanClause")(P, v)

    def all(self, parts):
        return _every(parts, self.CS.ForbiddenAndConjunction)

    def any(self, parts):
        return _some(parts, self._cls("ForbiddenOrConjunction"))

    def relation(self, cond, hps, space):
        L, R = hps[cond.left], hps[cond.right]
        if cond.op != "!=":
            return self._cls(self._RELATIONS[cond.op])(L, R)
        if not all(isinstance(space.dimensions[n], (Real, Integer)) for n in cond.parents()):
            raise ValueError(f"{self.what}: ConfigSpace has no forbidden != relation, and "
                             f"!= is < or > only between numbers.")
        return self.any([self._cls(self._RELATIONS["<"])(L, R),
                         self._cls(self._RELATIONS[">"])(L, R)])


def _to_cs(cond, words, hps, space):
    """``cond`` in ConfigSpace's ``words`` (conditions or forbidden clauses; None: it never
    holds)."""
    if isinstance(cond, (AllOf, AnyOf)):
        parts = [_to_cs(c, words, hps, space) for c in cond.conditions]
        return words.all(parts) if isinstance(cond, AllOf) else words.any(parts)
    if isinstance(cond, Relation):
        return words.relation(cond, hps, space)
    name = cond.name
    P, dim = hps[name], space.dimensions[name]
    values = dim.choices if isinstance(dim, Categorical) else _grid(dim) if _stepped(dim) \
        else None
    if isinstance(cond, NotEquals):
        if words.ne is not None and dim.when is None:
            return words.ne(P, cond.value)
        if values is not None:  # active, and another value
            return _cs_members(words, P, [v for v in values
                                          if json_key(v) != json_key(cond.value)])
        return words.any([words.lt(P, cond.value), words.gt(P, cond.value)])
    if isinstance(cond, Equals):
        return words.eq(P, cond.value)
    if isinstance(cond, In):
        return words.isin(P, list(cond.values))
    if isinstance(cond, Less):
        bounds = (None, False, cond.value, True)
    elif isinstance(cond, Greater):
        bounds = (cond.value, True, None, False)
    else:
        bounds = (cond.low, False, cond.high, False)
    return _cs_bounded(words, P, dim, values, *bounds)


def _cs_members(words, P, values):
    return None if not values else words.eq(P, values[0]) if len(values) == 1 \
        else words.isin(P, values)


def _cs_bounded(words, P, dim, values, low, low_strict, high, high_strict):
    """``low < (or <=) P < (or <=) high`` (a bound None: none) with the comparisons and values
    ConfigSpace accepts: a bound of ``<``/``>`` must be a value of ``P``."""
    if values is not None:  # an OrdinalHyperparameter of a stepped dimension's values
        if low is None and high in values and high_strict:
            return words.lt(P, high)
        if high is None and low in values and low_strict:
            return words.gt(P, low)
        return _cs_members(words, P, [
            v for v in values if (low is None or v > low or not low_strict and v == low)
            and (high is None or v < high or not high_strict and v == high)])
    lo, hi = dim.low, dim.high
    if isinstance(dim, Integer):  # as the integer bounds lo <= L <= P <= U <= hi
        L = lo if low is None else max(lo, math.floor(low) + 1 if low_strict
                                       else math.ceil(low))
        U = hi if high is None else min(hi, math.ceil(high) - 1 if high_strict
                                        else math.floor(high))
        if L > U:
            return None
        parts = ([words.gt(P, L - 1)] if L > lo else []) + \
            ([words.lt(P, U + 1)] if U < hi else [])
    else:
        if low is not None and (low > hi or low == hi and low_strict) or \
                high is not None and (high < lo or high == lo and high_strict):
            return None
        parts = []
        if low is not None and (low > lo or low == lo and low_strict):
            parts.append(words.gt(P, low) if low_strict
                         else words.any([words.gt(P, low), words.eq(P, low)]))
        if high is not None and (high < hi or high == hi and high_strict):
            parts.append(words.lt(P, high) if high_strict
                         else words.any([words.lt(P, high), words.eq(P, high)]))
    if not parts:  # every value: P active, P >= lo
        parts = [words.any([words.gt(P, lo), words.eq(P, lo)])]
    return words.all(parts)
