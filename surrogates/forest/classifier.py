"""Mondrian forest classification (Lakshminarayanan, Roy & Teh, 2014; Lakshminarayanan, 2016,
PhD thesis, chapter 5)."""

from __future__ import annotations

import numba
import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from ._classification_kernels import (WALK_DTYPE, build_cache, predict_proba_cached,
                                      predict_proba_trees)
from ._base import BaseMondrianForest
from .._core.estimator import ClassifierMixin
from .._core._tree_kernels import NNODES, TASK_CLASSIFICATION
from .._core.tree import fresh_array
from .._core.validation import check_choice, check_positive


def _plain_labels(y, classes) -> bool:
    """``y`` is a 1-D numeric array and the classes are numbers, or both are strings (a
    short object array of ``str`` counts: pandas gives those)."""
    if not isinstance(y, np.ndarray) or y.ndim != 1:
        return False
    a, b = y.dtype.kind, classes.dtype.kind
    if a in "iuf":
        return b in "iuf"
    if a == "U" or (a == "O" and y.shape[0] <= 64 and all(type(v) is str for v in y)):
        return b == "U" or (b == "O" and type(classes[0]) is str)
    return False


class _ProbaCache:
    """What :func:`predict_proba_cached` needs besides the trees: per-node posterior means and
    a compact pre-order copy of the splits (:func:`build_cache`).

    Derived from the trees, so it is rebuilt on demand after an update, and neither pickled
    nor copied.  Building costs O(nodes * K) per tree; without it, each query derives the
    node means along its path, O(depth * K) per tree.  After an update the cache is built
    once the queries since then have cost about as much as building it (``QUERY_COST``: one
    query's path walk in nodes of the cache build; measured build costs: surrogates/README.md,
    section 'Implementation choices measured during development'), so one-point
    predictions between one-point updates never pay for a whole build.  A mutable holder,
    so that predicting does not change the estimator's ``__dict__``.
    """

    QUERY_COST = 128

    def __init__(self):
        self.arrays = None
        self.key = None
        self.n_uncached = 0

    def invalidate(self):
        self.key = None
        self.n_uncached = 0

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()

    def get(self, store, K, gamma, n_queries):
        """The cache arrays for ``store``, or ``None`` when these queries should go without."""
        if self.key == gamma:
            return self.arrays
        nn = int(store.meta[:, NNODES].max())
        self.n_uncached += n_queries
        if self.n_uncached * self.QUERY_COST < nn:
            return None
        T = store.n_trees
        arrays = self.arrays
        if arrays is None or arrays[0].shape[0] != T or arrays[0].shape[1] < nn \
                or arrays[4].shape[2] != K:
            # a little headroom, so that a growing forest does not re-allocate every time
            cap = max(nn, int(1.25 * arrays[0].shape[1]) if arrays is not None else 0)
            self.arrays = arrays = None  # free the old buffers first
            arrays = (fresh_array((T, cap), WALK_DTYPE), fresh_array((T, cap), np.int32),
                      fresh_array((T, cap)), fresh_array((T, cap)), fresh_array((T, cap, K)))
        build_cache(store.inode, store.fnode, store.stats, store.meta, gamma, *arrays)
        self.arrays = arrays
        self.key = gamma
        return arrays


class MondrianForestClassifier(ClassifierMixin, BaseMondrianForest):
    """Online Mondrian forest classifier.

    Trees are Mondrian partitions grown inside the data's bounding boxes; a block pauses while
    its labels are all identical or it holds fewer than ``min_samples_split`` points, and is
    re-sampled when that stops being true (Lakshminarayanan, 2016, Section 5.5.1).  Leaf label
    distributions are smoothed along the path by a hierarchical normalized stable process with
    the interpolated Kneser-Ney approximation (discount ``exp(-gamma * delta_tau)``, ``gamma =
    discount_factor * n_features``, uniform base measure; Sections 5.4-5.4.1), and predictions
    average analytically over where a query could branch off the tree (Section 5.5.3): far
    from all data ``predict_proba`` is uniform.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees (the setting of Lakshminarayanan, 2016, Section 5.7).
    lifetime : float, default=inf
        Mondrian lifetime. With ``inf``, the papers' setting, a leaf's discount is 0, so a
        query inside a pure leaf's box gets a one-hot prediction (harmless for the accuracy the
        papers report, infinite log-loss on a wrong label); a finite lifetime smooths leaves
        too.
    min_samples_split : int, default=2
        Blocks with fewer points are paused (2 follows extremely randomized trees, as in
        Lakshminarayanan, 2016, Section 5.5.1).
    discount_factor : float, default=10
        ``gamma = discount_factor * n_features`` (10 in Lakshminarayanan, 2016, Section 5.7).
    branch_counts : {"ikn", "ref"}, default="ikn"
        Customers of a branch-off node: its tables (Lakshminarayanan, 2016, Alg. 5.8; what the
        IKN approximation gives) or the counts of the node below it (the authors' reference
        code, with which the published results were most likely computed). Only ``"ikn"``
        tends to the uniform distribution far from the data.
    proba_floor : float, default=0.0
        ``predict_proba`` returns ``(1 - proba_floor) * p + proba_floor / n_classes``, so that
        log-loss stays finite under one-hot leaves (see ``lifetime``). 0 keeps the model's
        probabilities.
    feature_bounds, feature_weights, random_state
        As for :class:`MondrianForestRegressor` (weights from ``mutual_info_classif`` /
        ``f_classif``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_, n_samples_seen_, feature_lower_, feature_scale_, feature_weights_
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of the data frame the forest was fitted on (only when it had string
        column names); later data frames must have the same columns in the same order.

    Notes
    -----
    ``n_estimators``, ``lifetime``, ``min_samples_split``, ``feature_bounds``,
    ``feature_weights`` and ``random_state`` shape the trees and are applied by ``fit`` (and by
    a first ``partial_fit``): after ``set_params`` changes one of them, predictions still use
    the fitted forest, as in scikit-learn, and ``partial_fit`` raises ``ValueError`` until
    ``fit`` is called.  ``discount_factor``, ``branch_counts`` and ``proba_floor`` act at
    prediction time and may be changed at any time.
    """

    _task = TASK_CLASSIFICATION

    def __init__(self, n_estimators=100, lifetime=np.inf, min_samples_split=2,
                 discount_factor=10.0, branch_counts="ikn", proba_floor=0.0,
                 feature_bounds=None, feature_weights=None, random_state=None):
        self.n_estimators = n_estimators
        self.lifetime = lifetime
        self.min_samples_split = min_samples_split
        self.discount_factor = discount_factor
        self.branch_counts = branch_counts
        self.proba_floor = proba_floor
        self.feature_bounds = feature_bounds
        self.feature_weights = feature_weights
        self.random_state = random_state

    # -- hooks ------------------------------------------------------------------------------
    def _n_stats(self):
        return 1 + len(self.classes_)

    def _check_params(self):
        super()._check_params()
        self._prediction_params()

    def _prediction_params(self):
        """``(discount_factor, branch_counts == "ref", proba_floor)``, checked (they may have
        been changed by ``set_params`` after fitting)."""
        d = check_positive(self.discount_factor, "discount_factor")
        ref = check_choice(self.branch_counts, "branch_counts", {"ikn", "ref"}) == "ref"
        f = self.proba_floor
        if isinstance(f, bool) or not isinstance(f, (int, float, np.floating)) or not 0 <= f < 1:
            raise ValueError(f"proba_floor must be a number in [0, 1), got {f!r}.")
        return d, ref, f

    def _encode_target(self, y, n_samples, first, classes=None):
        if y is None:
            raise ValueError("This estimator requires y to be passed, but the target y is None.")
        if first or not _plain_labels(y, self.classes_):
            # (the online fast path skips these, which cost more than inserting a point: the
            # labels of later calls are checked against the known classes below)
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
        if y.shape[0] != n_samples:
            raise ValueError(f"Input y has {y.shape[0]} samples, but X has {n_samples}.")
        if first:
            known = np.unique(y) if classes is None else np.unique(np.asarray(classes))
        else:
            known = self.classes_
            if classes is not None and not np.array_equal(np.unique(classes), known):
                raise ValueError(f"classes={list(classes)!r} differs from the classes of the "
                                 f"first partial_fit, {list(known)!r}.")
        idx = np.searchsorted(known, y)
        idx[idx == len(known)] = 0
        unseen = known[idx] != y
        if np.any(unseen):
            raise ValueError(f"y contains labels not among the known classes {list(known)!r}: "
                             f"{sorted(set(np.asarray(y)[unseen].tolist()))!r}. Pass all labels "
                             f"with classes= on the first partial_fit.")
        if first:
            self.classes_ = known
        return idx.astype(np.float64)

    def _relevance(self, X, y, kind):
        from sklearn.feature_selection import f_classif, mutual_info_classif

        if kind == "f_score":
            return f_classif(X, y)[0]
        return mutual_info_classif(X, y, random_state=0)

    def partial_fit(self, X, y, classes=None):
        """Add one point or a mini-batch online.

        ``classes`` lists every label the stream will contain; it is needed on the first call
        when that batch does not show all of them. A label outside the known classes later is
        an error (nothing is changed).
        """
        return super().partial_fit(X, y, classes=classes)

    def fit(self, X, y):
        """Grow ``n_estimators`` trees on ``(X, y)`` from scratch (classes from ``y``)."""
        return self._fit_batch(X, y)

    # -- prediction -------------------------------------------------------------------------
    def _after_update(self):
        cache = self.__dict__.get("_proba_cache")
        if cache is None:
            self._proba_cache = _ProbaCache()
        else:
            cache.invalidate()  # keeps its buffers for the next build

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape ``(n_samples, n_classes)``; rows sum to one."""
        Xs = self._checked_query(X)
        discount_factor, ref, proba_floor = self._prediction_params()
        cache = self.__dict__.get("_proba_cache")
        if cache is None:  # a model pickled before the cache existed
            cache = self._proba_cache = _ProbaCache()
        s = self._store
        out = np.empty((Xs.shape[0], len(self.classes_)))
        gamma = discount_factor * self.n_features_in_
        arrays = cache.get(s, len(self.classes_), gamma, Xs.shape[0])
        if arrays is None:
            predict_proba_trees(Xs, s.inode, s.fnode, s.box, s.stats, s.meta, gamma, ref, out)
        else:
            block = max(1, -(-Xs.shape[0] // numba.get_num_threads()))
            predict_proba_cached(Xs, *arrays, s.box, s.stats, s.meta, gamma, ref, out, block)
        if proba_floor:
            out = (1.0 - proba_floor) * out + proba_floor / out.shape[1]
        return out

    def predict_log_proba(self, X) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class (the first one on ties)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
