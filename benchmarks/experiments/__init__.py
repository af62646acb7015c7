"""The paper experiments: one script each, run with ``python -m benchmarks.experiments.<name>``.

* ``bo_quick``: Branin with a small budget, Mondrian BO against RF-SMAC and random search;
* ``regression_friedman``: Mondrian regression forests against scikit-learn's and river's
  (Lakshminarayanan et al., 2016 (AISTATS));
* ``regression_sweep``: the sweep that chose the regression forest's defaults;
* ``classification_online``: online classification (Lakshminarayanan, 2016 (thesis), ch. 5);
* ``grid_exploration``: Mondrian grid lifetime exploration (Balog & Teh, 2015);
* ``kernel_experiments``: the Mondrian kernel paper's experiments (Balog et al., 2016);
* ``integrations``: ``MondrianSampler`` in Optuna against ``mfbo.minimize`` and the
  ``Optimizer`` (quality, per-trial cost), ``MondrianSearchCV`` against ``RandomizedSearchCV``.

Each prints a markdown report; all but ``regression_sweep`` also write it, ``results.json``
(with the environment record) and their figures to ``--out``.  ``--quick`` (or small sizes) for
a smoke test.  An experiment imports :mod:`benchmarks.harness`, :mod:`benchmarks.problems` and
the public packages, never another experiment.
"""
