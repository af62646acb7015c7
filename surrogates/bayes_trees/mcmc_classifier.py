"""Metropolis-Hastings for Bayesian classification trees (Chipman, George & McCulloch 1998),
the MCMC baseline of Lakshminarayanan (2016), Section 3.4.2.

Same model as :class:`~surrogates.bayes_trees.smc.SMCDecisionTreeClassifier`: the prior (3.4)
and the Dirichlet-multinomial leaves (3.2).  Each iteration proposes one of four moves:

- grow (probability 0.25): a leaf whose inputs vary gets a split drawn from the prior;
- prune (0.25): a node whose children are both leaves becomes a leaf;
- change (0.4): an internal node gets a new split drawn from the prior given its data;
- swap (0.1): a parent and an internal child exchange splits (both children, when they
  share one rule, as in Chipman et al.).

Accepted with the Metropolis-Hastings probability; a proposal giving a node no data (an
empty child, or a split outside its node's range) has prior density 0 and is rejected.  A
move changes only the subtree under one node: each step finds that node's points (O(N depth)
comparisons), recomputes the subtree's statistics from them (O(N_j depth D)) and compares the
subtree's prior and likelihood terms.  Predictions average the trees of all iterations
(Section 3.4.2).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from . import _smc_kernels as core
from .._core._rng_kernels import seed_states
from .._core.validation import check_int, check_positive, check_X, feature_names, \
    seed_sequence, set_feature_names
from ._mcmc_kernels import FREE, LEAF, _log_posterior, _stats, compact, mcmc_step


class MCMCDecisionTreeClassifier(ClassifierMixin, BaseEstimator):
    """Bayesian classification tree sampled by Chipman, George & McCulloch's (1998)
    Metropolis-Hastings (grow, prune, change, swap), starting from a single leaf; predictions
    average the trees of all iterations (Lakshminarayanan 2016, Section 3.4.2).

    Parameters
    ----------
    n_iterations : int, default=1000
        Metropolis-Hastings steps.
    alpha, alpha_split, beta_split : float, default=5.0, 0.95, 0.5
        As for :class:`~surrogates.bayes_trees.smc.SMCDecisionTreeClassifier`.
    random_state : None, int, SeedSequence, RandomState or Generator, default=None

    Attributes
    ----------
    classes_, n_features_in_
    acceptance_rate_ : float
        Fraction of accepted proposals.
    log_posterior_ : ndarray of shape (n_iterations + 1,)
        Unnormalised log posterior of the current tree, from the initial leaf on.
    """

    def __init__(self, n_iterations=1000, alpha=5.0, alpha_split=0.95, beta_split=0.5,
                 random_state=None):
        self.n_iterations = n_iterations
        self.alpha = alpha
        self.alpha_split = alpha_split
        self.beta_split = beta_split
        self.random_state = random_state

    def fit(self, X, y, lik_scale: float = 1.0):
        n_iter = check_int(self.n_iterations, "n_iterations", 1)
        alpha = check_positive(self.alpha, "alpha")
        a_s, b_s = float(self.alpha_split), float(self.beta_split)
        if not 0 < a_s < 1:
            raise ValueError(f"alpha_split must be in (0, 1), got {self.alpha_split!r}.")
        if not 0 <= b_s < np.inf:
            raise ValueError(f"beta_split must be a finite number >= 0, got "
                             f"{self.beta_split!r}.")
        names = feature_names(X)
        X = np.ascontiguousarray(check_X(X, "X", estimator=self))
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"Input y has {y.shape[0]} samples, but X has {X.shape[0]}.")
        classes, codes = np.unique(y, return_inverse=True)
        codes = codes.astype(np.int64)
        N, D = X.shape
        K = len(classes)
        state = seed_states(seed_sequence(self.random_state), 1)
        lg_class, lg_total, const = core.lgamma_tables(N, K, alpha)
        cap = 2 * N + 5

        def tree():
            feat = np.full(cap, FREE, np.int64)
            feat[0] = LEAF
            return (feat, np.zeros(cap), np.full(cap, -1, np.int64),
                    np.full(cap, -1, np.int64), np.zeros(cap, np.int64), np.ones(1, np.int64))

        def stats():
            return (np.empty((cap, D)), np.empty((cap, D)), np.zeros((cap, K), np.int64),
                    np.zeros(cap, np.int64))

        cur, prop, cur_stats, prop_stats = tree(), tree(), stats(), stats()
        _stats(X, codes, cur[0], cur[1], cur[2], cur[3], 1, *cur_stats)
        cur_lp = np.array([_log_posterior(cur[0], cur[4], cur[2], cur[3], 1, *cur_stats, a_s,
                                          b_s, lik_scale, lg_class, lg_total, const)])
        pts = np.empty(N, np.int64)
        new_nodes = np.empty(cap, np.int64)
        old_nodes = np.empty(cap, np.int64)
        snapshots = [compact(cur[0], cur[1], cur[2], cur[3], cur_stats[2], 1, alpha)]
        mult = [1]
        log_post = [cur_lp[0]]
        accepted = 0
        for _ in range(n_iter):
            if mcmc_step(X, codes, cur, cur_stats, prop, prop_stats, cur_lp, a_s, b_s,
                         lik_scale, lg_class, lg_total, const, state, pts, new_nodes,
                         old_nodes):
                accepted += 1
                snapshots.append(compact(cur[0], cur[1], cur[2], cur[3], cur_stats[2],
                                         int(cur[5][0]), alpha))
                mult.append(1)
            else:
                mult[-1] += 1
            log_post.append(cur_lp[0])
        offsets = np.cumsum([0] + [len(s[0]) for s in snapshots[:-1]])
        self._trees = (np.concatenate([s[0] for s in snapshots]),
                       np.concatenate([s[1] for s in snapshots]),
                       np.concatenate([np.where(s[2] >= 0, s[2] + o, -1)
                                       for s, o in zip(snapshots, offsets)]),
                       np.ascontiguousarray(np.concatenate([s[3] for s in snapshots])),
                       offsets.astype(np.int64), np.array(mult, float) / sum(mult))
        self._shapes = [(int(np.sum(s[0] < 0)), s) for s in snapshots]
        self.classes_ = classes
        self.n_features_in_ = D
        set_feature_names(self, names)
        self.acceptance_rate_ = accepted / n_iter
        self.log_posterior_ = np.array(log_post)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities averaged over the trees of all iterations."""
        if "_trees" not in self.__dict__:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet.")
        X = np.ascontiguousarray(check_X(X, "X", self.n_features_in_, estimator=self))
        out = np.empty((X.shape[0], len(self.classes_)))
        core.predict_proba_trees(X, *self._trees, out)
        return out

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
