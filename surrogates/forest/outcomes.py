"""Several regression forests of the same inputs, predicted together.

Mondrian partitions depend on the inputs and the trees' random streams alone, never on the
targets, so forests grown from the same ``random_state`` on the same inputs in the same order
(one per outcome of a study: each objective and each constraint) share their partitions and
differ only in their nodes' label statistics.  :class:`SharedPartitions` walks each tree once
for all of them (the distances to the nodes' boxes, the branch-off probabilities and the
routing of the queries are the partition's) and returns every forest's predictions: the same
numbers, bit for bit, as each forest's own :meth:`~MondrianForestRegressor.predict` and
:meth:`~MondrianForestRegressor.predict_per_tree`.
"""

from __future__ import annotations

import numba
import numpy as np

from .._core._tree_kernels import NNODES
from .._core.threads import run_split
from .._core.tree import _SmallBatchKernel
from ._outcomes_kernels import predict_shared_range, same_nodes
from ._regression_kernels import MODE_BP_E, MODE_EMPIRICAL, N_BP, NODE_BLOCK
from .regressor import MondrianForestRegressor

__all__ = ["SharedPartitions", "share_partitions"]


#: batches of at least this many points may be split over the threads (below, the pool costs
#: more than it saves); from ``THREADS_ALWAYS`` on they are, and in between each batch runs
#: serially or threaded, whichever has been faster (:class:`_SharedBatchKernel`)
THREADS_FROM = 256
THREADS_ALWAYS = 2048


class _SharedBatchKernel(_SmallBatchKernel):
    """The serial or the threaded shared-partitions kernel for mid-sized batches (the
    acquisition's local-search rounds): a threaded call can wait on cores that other
    processes hold, so each is timed and the faster one used; the numbers are the same."""

    _warm = [False, False]


def _serial(n_blocks, *args):
    """:func:`predict_shared_range` of every block on the calling thread."""
    predict_shared_range(0, n_blocks, *args)


def _threaded(n_blocks, *args):
    """:func:`predict_shared_range` with the blocks split over the threads."""
    run_split(predict_shared_range, n_blocks, *args)


def share_partitions(forests) -> bool:
    """Whether fitted :class:`MondrianForestRegressor` s ``forests`` have the same partitions
    (the same trees, node for node) and the same feature scaling: then
    :class:`SharedPartitions` predicts them together."""
    forests = list(forests)
    if not forests or not all(type(f) is MondrianForestRegressor and "_store" in f.__dict__
                              for f in forests):
        return False
    first = forests[0]
    s0 = first._store
    nodes = s0.meta[:, NNODES]
    top = int(nodes.max())
    used = np.arange(top)[None, :] < nodes[:, None]  # (tree, node): the nodes of each tree
    for f in forests[1:]:
        s = f._store
        if (s.n_trees, s.n_features, s.n_points) != (s0.n_trees, s0.n_features, s0.n_points) \
                or not np.array_equal(s.meta, s0.meta):
            return False
        for attr in ("feature_lower_", "feature_scale_"):
            if not np.array_equal(getattr(f, attr), getattr(first, attr)):
                return False
        mult, mult0 = f.__dict__.get("_x_mult"), first.__dict__.get("_x_mult")
        if (mult is None) != (mult0 is None) or mult is not None and \
                not np.array_equal(mult, mult0):
            return False
        for attr in ("inode", "fnode", "box"):
            a, b = getattr(s, attr), getattr(s0, attr)
            if _same_bits(a, b, nodes):
                continue
            if not np.array_equal(a[:, :top][used], b[:, :top][used], equal_nan=True):
                return False
    return True


def _same_bits(a: np.ndarray, b: np.ndarray, nodes: np.ndarray) -> bool:
    """Whether the used nodes (``nodes[t]`` of tree ``t``) of two node arrays of the same
    kind are equal bit for bit (then they are equal in value too; False may still be equal
    values, e.g. 0.0 and -0.0), compared in place."""
    if a.dtype != b.dtype or a.dtype.itemsize != 8 or a.shape[2:] != b.shape[2:] \
            or not (a.flags.c_contiguous and b.flags.c_contiguous):
        return False
    T = a.shape[0]
    return bool(same_nodes(a.view(np.int64).reshape(T, a.shape[1], -1),
                           b.view(np.int64).reshape(T, b.shape[1], -1), nodes))


class SharedPartitions:
    """Fitted regression forests that share their partitions (:func:`share_partitions`),
    predicted in one walk of each tree.

    The forests' statistics, messages and hyper-parameters are read once, when this is made:
    it predicts the forests as they were then (a forest told more data since needs a new
    one).

    Parameters
    ----------
    forests : sequence of MondrianForestRegressor
        Fitted forests with the same partitions (``ValueError`` otherwise).
    """

    def __init__(self, forests):
        forests = list(forests)
        if not share_partitions(forests):
            raise ValueError("SharedPartitions needs fitted MondrianForestRegressors with the "
                             "same partitions and feature scaling.")
        self.forests = forests
        s0 = forests[0]._store
        self._store = s0
        nodes = int(s0.meta[:, NNODES].max())
        prepared = [f._prepare() for f in forests]
        F, T = len(forests), s0.n_trees
        self._stats = np.ascontiguousarray(np.stack([f._store.stats[:, :nodes]
                                                     for f in forests]))
        if all(mode == MODE_EMPIRICAL for mode, _, _ in prepared):
            self._bp = np.zeros((F, 1, 1, N_BP))
        else:
            self._bp = np.zeros((F, T, nodes, N_BP))
            for f, (mode, _, bp) in enumerate(prepared):
                if mode != MODE_EMPIRICAL:
                    self._bp[f] = bp[:, :nodes]
        self._modes = np.array([mode for mode, _, _ in prepared], dtype=np.int64)
        hyper = np.array([h for _, h, _ in prepared], dtype=float)  # mu, gamma1, gamma2, s2
        self._g1 = np.ascontiguousarray(hyper[:, 1])
        self._g2 = np.ascontiguousarray(hyper[:, 2])
        self._s2 = np.ascontiguousarray(hyper[:, 3])
        # (forests of one size and dimension have one gamma2: then belief propagation's
        # prior variances of branch-off components take one exponential for all forests)
        self._hoist = bool(np.any(self._modes == MODE_BP_E)) and bool(np.all(self._g2 ==
                                                                              self._g2[0]))

    def _run(self, X, per_tree: bool):
        Xs = self.forests[0]._checked_query(X)
        s = self._store
        n, F, T = Xs.shape[0], len(self.forests), s.n_trees
        mean = np.empty((F, n))
        var = np.empty((F, n))
        shape = (F, n, T) if per_tree else (0, 0, 0)
        tree_mean, tree_var = np.empty(shape), np.empty(shape)
        threads = numba.get_num_threads() if n >= THREADS_FROM else 1
        block = max(1, min(NODE_BLOCK, -(-n // threads)))  # a block per thread
        args = (Xs, s.inode, s.fnode, s.box, s.meta, self._stats, self._bp, self._modes,
                self._s2, self._g1, self._g2, self._hoist, mean, var, per_tree, tree_mean,
                tree_var, block)
        n_blocks = -(-n // block)
        if threads == 1:
            _serial(n_blocks, *args)
        elif n >= THREADS_ALWAYS:
            _threaded(n_blocks, *args)
        else:
            _SharedBatchKernel.run(s, "_shared_batches", _serial, _threaded, n, n_blocks, *args)
        return mean, var, tree_mean, tree_var

    def predict(self, X):
        """Every forest's :meth:`~MondrianForestRegressor.predict` ``(X, return_std=True)``:
        two lists of arrays, the means and the standard deviations, one per forest."""
        mean, var, _, _ = self._run(X, False)
        return ([f._unscale(m) for f, m in zip(self.forests, mean)],
                [f._unscale(np.sqrt(v)) for f, v in zip(self.forests, var)])

    def predict_all(self, X):
        """Every forest's predictions both ways, from one walk: ``(means, stds, tree_means,
        tree_vars)``, lists of one array per forest, as :meth:`predict` and
        :meth:`predict_per_tree` give them."""
        mean, var, tm, tv = self._run(X, True)
        fs = self.forests
        return ([f._unscale(m) for f, m in zip(fs, mean)],
                [f._unscale(np.sqrt(v)) for f, v in zip(fs, var)],
                [f._unscale(m) for f, m in zip(fs, tm)],
                [f._unscale(v, 2) for f, v in zip(fs, tv)])

    def predict_per_tree(self, X):
        """Every forest's :meth:`~MondrianForestRegressor.predict_per_tree`: two lists of
        ``(n_samples, n_estimators)`` arrays, the trees' means and variances, one per
        forest."""
        _, _, tm, tv = self.predict_all(X)
        return tm, tv
