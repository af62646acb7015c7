"""mfbo: Bayesian optimization with an online Mondrian forest surrogate."""

__version__ = "0.1.0"
