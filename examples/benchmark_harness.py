"""The benchmark harness: methods x seeds on a problem, a resumable JSONL file, a report.

Run: ``python examples/benchmark_harness.py`` (writes ``benchmark_results/`` where it runs).
The same from the shell::

    mfbo bench --problem branin --method mondrian,random --budget 20 --seeds 2 \\
        --out benchmark_results/results.jsonl
    mfbo report benchmark_results/results.jsonl --out benchmark_results

The full comparison of the papers (Table 3) is ``mfbo bench --problem
branin-grid,hartmann6-grid,lda-grid,svm-grid --method mondrian,rf-smac,random --seeds 15``
with each problem's own budget (HPOlib's); add ``smac,optuna`` after ``pip install
"mfbo[peers]"``.  ``lda-grid`` and ``svm-grid`` need the tables (set ``MFBO_DATA_DIR``).
"""

from benchmarks.harness import bench, report

results = "benchmark_results/results.jsonl"
# one JSON line per (problem, method, seed), appended as each run ends; calling again skips
# the runs already in the file, so an interrupted benchmark resumes where it stopped
records = bench.run("branin", ["mondrian", "random"], budget=20, seeds=2, out=results,
                    progress=False)
for r in records:
    print(f"{r['method']:9s} seed {r['seed']}: best {r['best']:.4f} after {r['n_evals']} "
          f"evaluations, {r['optimizer_time_s']:.2f} s in the optimizer")

# report.md (a table per problem) and branin.png (best-so-far gap, mean ± s.e. over seeds)
print(report.report(results, out="benchmark_results"))
