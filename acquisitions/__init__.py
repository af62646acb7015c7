"""Acquisition functions and their maximisers.

Sees a surrogate only through ``predict(X, return_std=True)``; never imports ``surrogates``.
"""
