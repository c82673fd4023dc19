"""The Optuna driver's test (scripts/test-all runs it with the venv's Python): a study of 30
trials in an SQLite file over `sim eval`, continued by a second worker on the same storage;
the best trial's settings, run through `sim run`, reproduce its wall times exactly.

Usage: test_optuna_tune.py SIM_BINARY
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCENARIO = os.path.join(REPO, "scenarios", "single-large-file.yaml")


def tune(sim, storage, trials, seed):
    run = subprocess.run(
        [
            sys.executable, os.path.join(HERE, "optuna_tune.py"),
            "--param", "input_format_parquet_coalesce_gap_bytes=16KiB..16MiB:log",
            "--param", "input_format_parquet_min_bytes_in_flight=1MiB..512MiB:log",
            "--trials", str(trials), "--seed", str(seed), "--storage", storage,
            "--study", "test", "--sim", sim, "--arm", "redesign", "--reps", "1",
            "--", SCENARIO,
        ],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        sys.exit(f"optuna_tune.py failed ({run.returncode}):\n{run.stderr}")
    return json.loads(run.stdout)


def main():
    sim = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="sim-optuna-test-") as d:
        storage = f"sqlite:///{os.path.join(d, 'study.db')}"
        first = tune(sim, storage, 30, 1)
        assert first["trials"] == 30, first
        # A second worker on the same storage continues the same study.
        best = tune(sim, storage, 2, 2)
        assert best["trials"] == 32, best
        assert best["objective"] <= first["objective"], (best, first)
        assert best["feasible"] is True, best
        # The best trial's settings through `sim run`: the same wall time in every case.
        cmd = [sim, "run", SCENARIO, "--arm", "redesign", "--reps", "1", "--json"]
        for s in best["sim_run_set"]:
            cmd += ["--set", s]
        report = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        walls = {
            f"{report['scenario']}/{c['case']}": next(
                m["mean"] for m in c["arms"][0]["metrics"] if m["name"] == "wall_time"
            )
            for c in report["cases"]
        }
        for s in best["scenarios"]:
            assert walls[s["scenario"]] == s["wall_time_ns"], (s, walls)
        ratio = best["objective"]
        print(
            f"test_optuna_tune: 30 trials and 2 more by a second worker on the same SQLite study; best {ratio:.4f} "
            f"of the defaults, reproduced by sim run in {len(walls)} cases"
        )


if __name__ == "__main__":
    main()
