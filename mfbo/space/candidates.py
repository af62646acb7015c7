"""A finite set of configurations to choose from: the user's ``candidates``, or every point of
a small fully discrete space."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from acquisitions import enumerate_grid, finite_size, row_keys

from .space import Space

__all__ = ["CandidateSet", "make_candidates", "MAX_ENUMERATED"]

#: fully discrete spaces up to this size are enumerated exactly as a candidate set
MAX_ENUMERATED = 100_000


class CandidateSet:
    """Rows of configurations: ``U`` their unit-cube points, ``rows`` the values as given
    (None for an enumerated space), ``first`` which rows can be proposed (a row repeated in
    the candidates is one configuration: only its first copy)."""

    def __init__(self, space: Space, U: np.ndarray, rows: np.ndarray | None = None):
        self.space = space
        self.U = U
        self.rows = rows
        self.first = np.zeros(U.shape[0], dtype=bool)
        self.first[np.unique(row_keys(U), return_index=True)[1]] = True
        self._key_index: dict[bytes, int] | None = None

    def __len__(self) -> int:
        return self.U.shape[0]

    def params(self, i: int) -> dict:
        """The configuration of row ``i``, with the exact values given (a parameter inactive
        in it left out)."""
        if self.rows is None:
            return self.space.from_unit(self.U[i])[0]
        row, active = self.rows[i], self.space.active(self.U[i])[0]
        return {n: d.validate(n, v.item() if isinstance(v, np.generic) else v)
                for (n, d), v, on in zip(self.space.dimensions.items(), row, active) if on}

    def index_of(self, unit: np.ndarray) -> int | None:
        """The first row whose unit point is ``unit``, or None."""
        if self._key_index is None:
            self._key_index = {}
            for i, k in enumerate(row_keys(self.U)):
                self._key_index.setdefault(k, i)
        return self._key_index.get(row_keys(unit[None, :])[0])


def make_candidates(space: Space, candidates=None) -> CandidateSet | None:
    """The candidate set of ``candidates`` (an array whose columns follow the space's names, a
    DataFrame or a list of dicts); without them, every point of a fully discrete space of at
    most :data:`MAX_ENUMERATED` points, else None."""
    if candidates is None:
        if finite_size(space.levels) <= MAX_ENUMERATED and np.all(space.levels != 0):
            U = enumerate_grid(space.levels)
            if space.constrained:  # each configuration once, the allowed ones only
                U = space.canonical(U)
                U = U[np.sort(np.unique(row_keys(U), return_index=True)[1])]
                U = U[space.allowed(U)]
            return CandidateSet(space, U)
        return None
    if hasattr(candidates, "columns"):
        missing = [n for n in space.names if n not in candidates.columns]
        if missing:
            raise ValueError(f"candidates lack column(s) {missing}.")
        cols = list(candidates.columns)
        twice = sorted({n for n in space.names if cols.count(n) > 1})
        if twice:
            raise ValueError(f"candidates have duplicate column(s) {twice}.")
        rows = candidates[space.names]
        U, values = space.array_to_unit(rows.to_numpy()), rows.to_numpy()
    elif isinstance(candidates, (list, tuple)) and candidates and isinstance(
            candidates[0], Mapping):
        U = space.to_unit(list(candidates))
        values = np.array([[r.get(n) for n in space.names] for r in candidates], dtype=object)
    else:
        values = np.asarray(candidates)
        U = space.array_to_unit(values)
    if U.shape[0] == 0:
        raise ValueError("candidates must have at least one row.")
    return CandidateSet(space, U, values)
