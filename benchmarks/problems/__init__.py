"""What the benchmarks measure: the Bayesian-optimisation problems and suites, and the data.

* :mod:`~benchmarks.problems.problems`: every problem by name (``get_problem``), the suites and
  their dev / test splits;
* :mod:`~benchmarks.problems.sklearn_tune`, :mod:`~benchmarks.problems.mixed`,
  :mod:`~benchmarks.problems.bbob`: the three public suites' problems;
* :mod:`~benchmarks.problems.data`: the public data files, located, downloaded and checked by
  SHA-256;
* :mod:`~benchmarks.problems.regression_data`, :mod:`~benchmarks.problems.flights`: the
  regression experiments' train / test splits.

Nothing here imports the harness or an experiment.
"""
