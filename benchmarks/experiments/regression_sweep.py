"""How the regression forest's defaults were chosen: a sweep of ``min_samples_split``,
``gamma2_factor`` and ``feature_weights`` on the Friedman-1 and cpu_act splits of the
regression benchmark (:mod:`benchmarks.problems.regression_data`).

Run ``python -m benchmarks.experiments.regression_sweep [--quick]``.  One forest is grown per
(data, weights, min_samples_split); the posterior settings are switched with ``set_params`` on
the same trees.  Prints RMSE, NLPD and the largest calibration error (observed minus nominal
coverage over z = 0.1..0.9) per setting.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from benchmarks.harness.calibration import calibration
from benchmarks.harness.tables import markdown_table
from benchmarks.problems.regression_data import FULL, QUICK, SEED, cpu_act_split, friedman_split
from surrogates import MondrianForestRegressor, rmse

POSTERIORS = [("empirical", None, None)] + [("bp", "E", f) for f in (0.5, 1.0, 2.0, 20.0)]


def sweep(split, weights, mss_values) -> list[list[str]]:
    """One table row per (feature weights, min_samples_split, posterior setting) on ``split``."""
    rows = []
    for fw in weights:
        for mss in mss_values:
            model = MondrianForestRegressor(min_samples_split=mss, feature_weights=fw,
                                            random_state=SEED).fit(split.X_train, split.y_train)
            for posterior, branch_off, factor in POSTERIORS:
                model.set_params(posterior=posterior, branch_off=branch_off,
                                 gamma2_factor=factor or 1.0)
                mean, std = model.predict(split.X_test, return_std=True)
                err = max(abs(e) for e in calibration(split.y_test, mean, std))
                rows.append([str(fw), str(mss), posterior, "" if factor is None else f"{factor:g}",
                             f"{rmse(split.y_test, mean):.3f}",
                             f"{model.nlpd(split.X_test, split.y_test):.3f}", f"{err:.3f}"])
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point: print one table per data set."""
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    headers = ["feature_weights", "min_samples_split", "posterior", "gamma2_factor", "RMSE",
               "NLPD", "max calibration error"]
    for name, split in (("Friedman-1", friedman_split(sizes)), ("cpu_act", cpu_act_split(sizes))):
        print(f"\n## {name}\n")
        print(markdown_table(headers, sweep(split, (None, "mutual_info"), (2, 10))))


if __name__ == "__main__":
    main()
