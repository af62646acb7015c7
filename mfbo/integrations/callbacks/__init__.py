"""Callbacks that connect mfbo to the tools around a training run.

- :class:`~.mlflow.MLflowCallback`: a callback of :func:`mfbo.minimize` logging each finished
  trial to MLflow as a run nested under one run of the study (``pip install "mfbo[mlflow]"``);
- :class:`~.lightgbm.LightGBMPruningCallback`: a LightGBM training callback that reports a
  validation metric after each boosting round to the running trial and stops the training
  when the study's pruner says so (``pip install "mfbo[lightgbm]"``).

Each module imports its library when it is imported, with a message naming the extra that
installs it; this package imports neither.
"""
