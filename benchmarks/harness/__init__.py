"""How the benchmarks measure: the commands, what they run, and the helpers every benchmark shares.

* the commands ``mfbo bench``, ``mfbo report``, ``mfbo scale`` (:mod:`~benchmarks.harness.cli`,
  also ``python -m benchmarks.harness.bench`` / ``.report`` / ``.scaling``):
  :mod:`~benchmarks.harness.bench` (the runner) with :mod:`~benchmarks.harness.results_file`,
  :mod:`~benchmarks.harness.methods` and :mod:`~benchmarks.harness.peers` (the methods compared),
  :mod:`~benchmarks.harness.report` with :mod:`~benchmarks.harness.paired` (the paired tests),
  :mod:`~benchmarks.harness.scaling`; and ``python -m benchmarks.harness.first_minute`` (a new
  user's first minute);
* shared helpers: :mod:`~benchmarks.harness.timing` (the one clock),
  :mod:`~benchmarks.harness.tables`, :mod:`~benchmarks.harness.figures`,
  :mod:`~benchmarks.harness.environment` (the record stored with every result),
  :mod:`~benchmarks.harness.progress`, :mod:`~benchmarks.harness.calibration` (predictive
  scores), :mod:`~benchmarks.harness.postgres_server` and
  :mod:`~benchmarks.harness.shared_workers` (a throwaway PostgreSQL server and worker processes
  sharing one study).

The harness imports the problems, never an experiment.
"""
