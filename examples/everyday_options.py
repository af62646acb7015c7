"""Everyday options: maximise a score, evaluate known configurations first, stop after a time
budget, and look into the stored study from the command line.

Run: ``python examples/everyday_options.py`` (writes study.db where it runs).  Then
``mfbo study show study.db``, ``mfbo study best study.db`` or
``mfbo study export study.db --csv trials.csv``.
"""

import math
import time

import mfbo
from mfbo import Integer, Real
from mfbo.cli.main import main as mfbo_command


def validation_accuracy(lr, width):
    """A stand-in for training a model: higher is better, best near lr=3e-3, width=96."""
    time.sleep(0.05)
    return 0.97 - 0.04 * (math.log10(lr) + 2.5) ** 2 - 0.02 * ((width - 96) / 64) ** 2


space = {"lr": Real(1e-5, 1e-1, log=True), "width": Integer(8, 256)}
# the configurations we already trust go first (scikit-optimize's x0)
known = [{"lr": 1e-3, "width": 64}, {"lr": 1e-2, "width": 128}]

# 1. maximise; stop asking after 2 seconds or 100 evaluations, whichever comes first
result = mfbo.minimize(validation_accuracy, space, direction="maximize", n_calls=100,
                       initial_points=known, timeout=2.0, storage="study.db",
                       study_name="accuracy", random_state=0, progress_bar=False)
print(f"{len(result.trials)} trials in the time budget; the first two were the known ones: "
      f"{[t.params for t in result.trials[:2]]}")
print(f"best accuracy {result.best_value:.4f} at lr={result.best_params['lr']:.2e}, "
      f"width={result.best_params['width']}")

# 2. the same call again resumes the stored study (same direction; the known configurations
#    are not evaluated twice) and goes on for another second
again = mfbo.minimize(validation_accuracy, space, direction="maximize", n_calls=100,
                      initial_points=known, timeout=1.0, storage="study.db",
                      study_name="accuracy", random_state=0, progress_bar=False)
print(f"resumed: {len(again.trials)} trials, best accuracy {again.best_value:.4f}")

# 3. ask/tell: enqueue a configuration to try next; it is kept in study.db until asked
opt = mfbo.Optimizer(space, direction="maximize", storage="study.db", study_name="accuracy",
                     random_state=0)
opt.enqueue({"lr": 3e-3, "width": 96})
trial = opt.ask()
told = opt.tell(trial, validation_accuracy(**trial.params))
print(f"enqueued trial {told.id}: {told.params} -> {told.value:.4f} "
      f"(best so far {opt.best_trial.value:.4f})")
opt.close()

# 4. what `mfbo study show study.db` prints
mfbo_command(["study", "show", "study.db"])
