"""mfbo inside optuna: ``MondrianSampler`` proposes the trials of an optuna study
(``pip install "mfbo[optuna]"``).

Run: ``python examples/optuna_sampler.py [--storage sqlite:///optuna_example.db]``.  The
objective is written as for any optuna sampler (define-by-run, mixed parameter types, a
parameter asked only on some branches); mfbo's online Mondrian forest proposes all of them
jointly, the conditional ones under the conditions it infers from the trials (here ``lr`` only
where ``solver`` is "adam" or "sgd").  With ``--storage`` the study is written where
optuna-dashboard (or other processes running this script) can read it.  At the end the study's
trials warm-start an mfbo Optimizer (``mfbo.from_optuna``, in the same conditional space),
which goes on with mfbo's own ask/tell.
"""

import argparse
import math

import optuna

import mfbo
from mfbo.integrations.optuna import MondrianSampler


def objective(trial):
    """Branin's function of (x, y), plus a penalty for an unsuited solver (less for a gradient
    solver's learning rate near 0.01) and for the number of restarts: minimum 0.397887 at three
    (x, y) points with solver "lbfgs" and 0 restarts."""
    x = trial.suggest_float("x", -5.0, 10.0)
    y = trial.suggest_float("y", 0.0, 15.0)
    solver = trial.suggest_categorical("solver", ["lbfgs", "adam", "sgd"])
    penalty = 0.0
    if solver != "lbfgs":  # a conditional parameter: asked on this branch only
        lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
        penalty = {"adam": 0.5, "sgd": 2.0}[solver] + abs(math.log10(lr) + 2)
    restarts = trial.suggest_int("restarts", 0, 8, step=2)
    branin = ((y - 5.1 / (4 * math.pi ** 2) * x ** 2 + 5 / math.pi * x - 6) ** 2
              + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x) + 10)
    return branin + penalty + 0.1 * restarts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default=None, help="an optuna storage URL")
    parser.add_argument("--n-trials", type=int, default=30)
    args = parser.parse_args()

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="mfbo-branin", storage=args.storage,
                                load_if_exists=True,
                                sampler=MondrianSampler(seed=0, n_startup_trials=8))
    study.optimize(objective, n_trials=args.n_trials)
    print(f"optuna + MondrianSampler, {len(study.trials)} trials: best value "
          f"{study.best_value:.4f} (optimum 0.3979) at {study.best_params}")

    # the same trials, continued with mfbo's own ask/tell (in the conditional space inferred
    # from them: lr active where solver is "adam" or "sgd")
    opt = mfbo.from_optuna(study, random_state=0)
    print(f"space inferred from the trials: {opt.space}")
    for _ in range(5):
        t = opt.ask()
        opt.tell(t, objective(optuna.trial.FixedTrial(t.params)))
    print(f"mfbo Optimizer warm-started with {len(study.trials)} optuna trials, 5 more: best "
          f"{opt.best_trial.value:.4f}")


if __name__ == "__main__":
    main()
