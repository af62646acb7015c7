"""The Mondrian kernel's random features (Balog, Lakshminarayanan, Ghahramani, Roy & Teh, 2016):
``M`` Mondrian partitions sampled up to a lifetime ``lambda``; the sparse indicator features of
their cells have inner products that approximate the Laplace kernel
``exp(-lambda |x - x'|_1)``."""

from __future__ import annotations

import copy
import math

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._core._tree_kernels import NNODES, TASK_STRUCTURE
from .._core.tree import TreeStore
from .._core.validation import (check_choice, check_int, check_unchanged, check_X,
                                feature_names, set_feature_names, seed_sequence)
from . import _kernels as core
from ._common import _check_lifetime, _check_seed


# --------------------------------------------------------------------------------------------
# the cells of stored trees at a lifetime
# --------------------------------------------------------------------------------------------


class _CellMap:
    """Mondrian trees in a :class:`TreeStore` (grown to ``store.lifetime``) truncated at
    ``lifetime <= store.lifetime``, with global cell ids.

    ``F[n, t]`` is the cell of store row ``n`` in tree ``t``; ``tree_of[c]`` the tree of cell
    ``c``.  Store rows keep their order: whoever builds the map knows which rows are labelled.
    """

    def __init__(self, store: TreeStore, lifetime: float, route: bool = True):
        self.store = store
        self.lifetime = float(lifetime)
        if not route:  # a bare holder of the trees (the sweeps number cells themselves)
            return
        T, cap = store.n_trees, store.inode.shape[1]
        self.feat_of_node = np.empty((T, cap), np.int64)
        self.tree_of = np.empty(max(16, int(store.meta[:, NNODES].sum())), np.int64)
        self.n_cells = core.number_cells(store.inode, store.fnode, store.meta, self.lifetime,
                                         self.feat_of_node, self.tree_of)
        n = store.n_points
        self.F = np.empty((n, T), np.int64)
        if n:
            p = np.empty((n, T))
            core.route_expected(store.X[:n], store.inode, store.fnode, store.box, store.meta,
                                self.lifetime, self.feat_of_node, self.F, p)

    @classmethod
    def grow(cls, X: np.ndarray, n_trees: int, lifetime: float, ss: np.random.SeedSequence,
             route: bool = True) -> "_CellMap":
        store = TreeStore(n_trees, X.shape[1], 1, lifetime, 1, TASK_STRUCTURE, ss,
                          capacity=max(16, X.shape[0]))
        store.fit(X, np.zeros(X.shape[0]))
        return cls(store, lifetime, route)

    @property
    def n_trees(self) -> int:
        return self.store.n_trees

    def truncate(self, lifetime: float) -> "_CellMap":
        """The same trees at a (smaller) lifetime, on a private copy of the store."""
        if lifetime > self.store.lifetime:
            raise ValueError(f"lifetime {lifetime} exceeds the lifetime the trees were grown to "
                             f"({self.store.lifetime}).")
        return _CellMap(copy.deepcopy(self.store), lifetime)

    def route(self, Xq: np.ndarray, mode: str = "expected", seed: int = 0):
        """Cell ids ``(n, T)`` and feature values ``(n, T)`` (``p_join * M^-1/2``) for
        ``mode="expected"``; for ``"sample"`` the values are all ``M^-1/2`` and a row split off
        in tree ``t`` gets id ``t - M`` (its fresh cell)."""
        s = self.store
        n, T = Xq.shape[0], s.n_trees
        feat = np.empty((n, T), np.int64)
        if mode == "expected":
            p = np.empty((n, T))
            core.route_expected(Xq, s.inode, s.fnode, s.box, s.meta, self.lifetime,
                                self.feat_of_node, feat, p)
            return feat, p / math.sqrt(T)
        core.route_sampled(Xq, s.inode, s.fnode, s.box, s.meta, self.lifetime,
                           self.feat_of_node, np.uint64(seed), -T, feat)
        return feat, np.full((n, T), 1.0 / math.sqrt(T))

    def extend(self, Xnew: np.ndarray) -> None:
        """Insert rows online (conditional Mondrian, Balog et al., 2016, Section 5): at most
        one new cell per tree and row; old rows keep their cells.  Raises before any change on
        non-finite input."""
        s = self.store
        n_old = s.n_points
        b = Xnew.shape[0]
        T = s.n_trees
        s.extend(Xnew, np.zeros(b), np.zeros(s.n_features), np.ones(s.n_features))
        if s.inode.shape[1] > self.feat_of_node.shape[1]:
            self.feat_of_node = np.empty((T, s.inode.shape[1]), np.int64)
        F = np.empty((n_old + b, T), np.int64)
        F[:n_old] = self.F
        need = self.n_cells + T * b
        if need > self.tree_of.shape[0]:
            tree_of = np.empty(max(need, 2 * self.tree_of.shape[0]), np.int64)
            tree_of[: self.n_cells] = self.tree_of[: self.n_cells]
            self.tree_of = tree_of
        nxt = self.n_cells
        for t in range(T):
            nxt = core.relabel_tree(s.inode, s.fnode, s.meta, s.pnext, t, self.lifetime, F, n_old,
                                    n_old + b, self.feat_of_node, self.tree_of, nxt)
        self.F = F
        self.n_cells = nxt


def _csr(feat: np.ndarray, val: np.ndarray, n_cols: int, shift: int) -> sp.csr_matrix:
    n, T = feat.shape
    idx = feat + shift  # fresh cells (id t - M) land on column t
    m = sp.csr_matrix((val.ravel(), idx.ravel(), np.arange(0, n * T + 1, T)), shape=(n, n_cols))
    m.sort_indices()
    return m


# --------------------------------------------------------------------------------------------
# MondrianKernel: the feature map
# --------------------------------------------------------------------------------------------


class MondrianKernel(TransformerMixin, BaseEstimator):
    """Mondrian kernel random features (Balog et al., 2016, Section 3.1): a Laplace-kernel
    approximation of order M.

    ``fit`` samples ``n_trees`` independent Mondrian partitions up to ``lifetime`` (restricted
    to the data, which is exact by projectivity); ``transform`` maps each row to the cells it
    falls in, one per tree, with value ``M^-1/2``, so that
    ``transform(X) @ transform(Y).T`` estimates ``exp(-lifetime * |x - y|_1)`` without bias.

    Column layout: columns ``0..M-1`` are the *fresh* cells of the trees (cells that a new
    point is split off into by the conditional Mondrian; no fitted row is in them), columns
    ``M..M+C-1`` the ``C`` cells of the fitted rows.  ``partial_fit`` appends new cells at the
    end, so earlier columns keep their meaning.

    Parameters
    ----------
    n_trees : int, default=50
        Number of Mondrian samples ``M`` (= non-zeros per row).
    lifetime : float, default=1.0
        Lifetime ``lambda`` = inverse L1 length-scale of the approximated Laplace kernel.  It is
        scale dependent: a few times ``1 / median |x - x'|_1`` is a natural start (the kernel
        is then ``exp(-a few)`` at the typical distance).
    extension : {"expected", "sample"}, default="expected"
        How rows outside the fitted cells' extents are treated.  The paper places a new point
        by the conditional Mondrian (Balog et al., 2016, Section 2.4), a random extension of
        the trees.  ``"expected"``, the default, integrates over that extension, as Mondrian
        forests do for predictions far from the data (Balog & Teh, 2015, Section 2):
        each row keeps exactly ``M`` stored entries, at the cell it is routed to, with value
        ``p_join * M^-1/2`` where ``p_join`` is the probability that an extension of the tree
        does not split it off (1 for rows inside the extents, in particular all fitted rows).
        Unbiased for the kernel between a new and a fitted row; deterministic.  ``"sample"``:
        that split-off is sampled (a fixed stream per row index), so every row has exactly
        ``M`` non-zeros of value ``M^-1/2``; a row split off in tree ``t`` lands in column
        ``t`` (tree ``t``'s fresh cell).  Two new rows split off in the same tree share that
        column, which overstates their mutual kernel; use ``"expected"`` for kernel values
        between new rows.  To partition validation and test rows together with the training
        rows, as the authors' reference code does, fit on all rows.
    random_state : int, SeedSequence, RandomState, Generator or None, default=None
        Seeds the trees' independent streams (and the ``"sample"`` extension).

    Attributes
    ----------
    n_features_in_ : int
    n_cells_ : int
        ``C``, the number of cells (non-empty leaves) over all trees.
    n_features_out_ : int
        ``M + C``, the width of ``transform``'s output.
    tree_of_feature_ : ndarray of shape (n_features_out_,)
        Tree of each output column.
    """

    #: parameters applied by ``fit``; ``partial_fit`` refuses to go on after they changed
    _STRUCTURE = ("n_trees", "lifetime", "random_state")

    def __init__(self, n_trees=50, lifetime=1.0, extension="expected", random_state=None):
        self.n_trees = n_trees
        self.lifetime = lifetime
        self.extension = extension
        self.random_state = random_state

    def _check_params(self):
        check_int(self.n_trees, "n_trees", 1)
        _check_lifetime(self.lifetime)
        check_choice(self.extension, "extension", {"expected", "sample"})
        _check_seed(self.random_state)

    def fit(self, X, y=None):
        """Sample the ``n_trees`` Mondrian partitions of the rows of ``X`` up to ``lifetime``."""
        self._check_params()
        names = feature_names(X)
        X = check_X(X, "X", estimator=self)
        ss = seed_sequence(self.random_state)
        tree_ss, sample_ss = ss.spawn(2)
        self._map = _CellMap.grow(X, self.n_trees, self.lifetime, tree_ss)
        self._sample_seed = int(sample_ss.generate_state(1, np.uint64)[0])
        self.n_features_in_ = X.shape[1]
        set_feature_names(self, names)
        self._fit_params = {k: getattr(self, k) for k in self._STRUCTURE}
        return self

    def partial_fit(self, X, y=None):
        """Extend the partitions by new rows (conditional Mondrian, same distribution as a
        refit); each row adds at most one new cell (column) per tree."""
        if not hasattr(self, "_map"):
            return self.fit(X)
        self._check_params()
        check_unchanged(self, self.__dict__.get("_fit_params"))
        X = check_X(X, "X", self.n_features_in_, estimator=self, check_finite=False)
        self._map.extend(X)
        return self

    @property
    def n_cells_(self) -> int:
        check_is_fitted(self, "_map")
        return self._map.n_cells

    @property
    def n_features_out_(self) -> int:
        return self.n_trees_ + self.n_cells_

    @property
    def n_trees_(self) -> int:
        check_is_fitted(self, "_map")
        return self._map.n_trees

    @property
    def tree_of_feature_(self) -> np.ndarray:
        m = self._map
        return np.concatenate([np.arange(m.n_trees), m.tree_of[: m.n_cells]])

    def transform(self, X) -> sp.csr_matrix:
        """Sparse CSR features, shape ``(n_samples, n_features_out_)``, ``M`` entries per row."""
        check_is_fitted(self, "_map")
        check_choice(self.extension, "extension", {"expected", "sample"})
        X = check_X(X, "X", self.n_features_in_, estimator=self)
        feat, val = self._map.route(X, self.extension, self._sample_seed)
        T = self._map.n_trees
        return _csr(feat, val, T + self._map.n_cells, T)

    def kernel(self, X, Y=None) -> np.ndarray:
        """The approximate Gram matrix ``k_M(X, Y) = transform(X) @ transform(Y).T`` (dense)."""
        ZX = self.transform(X)
        ZY = ZX if Y is None else self.transform(Y)
        return (ZX @ ZY.T).toarray()

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        check_is_fitted(self, "_map")
        m = self._map
        fresh = [f"mondrian_t{t}_fresh" for t in range(m.n_trees)]
        cells = [f"mondrian_t{t}_c{c}" for c, t in enumerate(m.tree_of[: m.n_cells])]
        return np.asarray(fresh + cells, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []
        tags.input_tags.sparse = False
        return tags
