"""Benchmarks of mfbo: the harness, and the paper experiments in :mod:`benchmarks.experiments`.

The harness: problems and suites (:mod:`~benchmarks.problems`; the suites' problems in
:mod:`~benchmarks.sklearn_tune` and :mod:`~benchmarks.mixed`), methods and peer adapters
(:mod:`~benchmarks.methods`, :mod:`~benchmarks.peers`), the runner and its results file
(:mod:`~benchmarks.bench`, :mod:`~benchmarks.results_file`), reports
(:mod:`~benchmarks.report`), the scaling measurements (:mod:`~benchmarks.scaling`), data
loaders (:mod:`~benchmarks.data`, :mod:`~benchmarks.regression_data`) and the helpers every
benchmark shares: :mod:`~benchmarks.timing`, :mod:`~benchmarks.tables`,
:mod:`~benchmarks.figures`, :mod:`~benchmarks.environment`, :mod:`~benchmarks.progress`,
:mod:`~benchmarks.calibration`.  Commands: ``mfbo bench``, ``mfbo report``, ``mfbo scale``
(:mod:`~benchmarks.cli`).
"""
