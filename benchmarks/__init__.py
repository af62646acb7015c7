"""Benchmarks of mfbo, in three rooms.

* :mod:`benchmarks.problems`: what is measured.  The Bayesian-optimisation problems and the
  suites (:mod:`~benchmarks.problems.problems`, the registry; the suites' problems in
  :mod:`~benchmarks.problems.sklearn_tune`, :mod:`~benchmarks.problems.mixed` and
  :mod:`~benchmarks.problems.bbob`), the public data files, downloaded and checked by SHA-256
  (:mod:`~benchmarks.problems.data`), and the regression experiments' data
  (:mod:`~benchmarks.problems.regression_data`, :mod:`~benchmarks.problems.flights`).
* :mod:`benchmarks.harness`: how it is measured.  The commands ``mfbo bench``, ``mfbo report``
  and ``mfbo scale`` (:mod:`~benchmarks.harness.cli`) with their runner, results file, methods,
  peers, paired tests and reports, the first-minute and scaling measurements, and the helpers
  every benchmark shares (timing, tables, figures, environment record, progress, calibration
  scores, a throwaway PostgreSQL server and shared-study workers).
* :mod:`benchmarks.experiments`: the papers' experiments, one script each.

The rooms import one way: problems import nothing of the others, the harness imports the
problems, an experiment imports the harness and the problems but never another experiment.
"""
