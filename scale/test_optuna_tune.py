"""The Optuna driver's test (scripts/test-all runs it with the venv's Python): a study of 30
trials in an SQLite file over `sim eval`, continued by a second worker on the same storage;
the best trial's settings, run through `sim run`, reproduce its wall times exactly. Two workers
run at once on one study with their default seeds and propose no trial twice; a seeded worker
resuming a study proposes new trials; a bad scenario stops before any trial; and the driver's
size units are the ones `sim` accepts.

Usage: test_optuna_tune.py SIM_BINARY
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCENARIO = os.path.join(REPO, "scenarios", "single-large-file.yaml")


def command(sim, storage, trials, seed, study="test"):
    seed_args = [] if seed is None else ["--seed", str(seed)]
    return [
        sys.executable, os.path.join(HERE, "optuna_tune.py"),
        "--param", "input_format_parquet_coalesce_gap_bytes=16KiB..16MiB:log",
        "--param", "input_format_parquet_min_bytes_in_flight=1MiB..512MiB:log",
        "--trials", str(trials), *seed_args, "--storage", storage,
        "--study", study, "--sim", sim, "--arm", "redesign", "--reps", "1",
        "--", SCENARIO,
    ]


def tune(sim, storage, trials, seed):
    run = subprocess.run(command(sim, storage, trials, seed), capture_output=True, text=True)
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
        assert best["feasible"] is True, best
        # The best trial's settings through `sim run`: the same wall time in every case.
        cmd = [sim, "run", SCENARIO, "--arm", "redesign", "--reps", str(best["sim_run_reps"]), "--json"]
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
        concurrent_workers_propose_different_trials(sim, d)
        a_resumed_seeded_study_proposes_new_trials(sim, d)
        a_bad_scenario_stops_before_any_trial(sim, d)
        units_match_sims()
        ratio = best["objective"]
        print(
            f"test_optuna_tune: 30 trials and 2 more by a second worker on the same SQLite study; best {ratio:.4f} "
            f"of the defaults, reproduced by sim run in {len(walls)} cases"
        )


def concurrent_workers_propose_different_trials(sim, d):
    """Two workers at once on one study, default seeds: no settings proposed twice (with one
    seed each proposed the other's trials)."""
    import optuna

    storage = f"sqlite:///{os.path.join(d, 'two.db')}"
    # The study exists before its workers start (two processes creating SQLite's tables at
    # once race), as a deployment creates it once.
    optuna.create_study(study_name="two", storage=storage, direction="minimize")
    procs = [
        subprocess.Popen(command(sim, storage, 4, None, "two"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0, err
    trials = optuna.load_study(study_name="two", storage=storage).trials
    assert len(trials) == 8, len(trials)
    params = [tuple(sorted(t.params.items())) for t in trials]
    assert len(set(params)) == len(params), params


def a_resumed_seeded_study_proposes_new_trials(sim, d):
    """The same seeded command twice on one study: six different trials (with the sampler
    seeded alike both times, the second run proposed the first's three again)."""
    import optuna

    storage = f"sqlite:///{os.path.join(d, 'resume.db')}"
    for _ in range(2):
        tune(sim, storage, 3, 5)
    trials = optuna.load_study(study_name="test", storage=storage).trials
    params = [tuple(sorted(t.params.items())) for t in trials]
    assert len(params) == 6 and len(set(params)) == 6, params


def a_bad_scenario_stops_before_any_trial(sim, d):
    """A scenario that does not exist: an error naming it, and no trial in the study (each
    trial failed in turn, then `best_trial` raised an unrelated error)."""
    storage = f"sqlite:///{os.path.join(d, 'bad.db')}"
    cmd = command(sim, storage, 3, 1)
    cmd[-1] = os.path.join(d, "nope.yaml")
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode != 0, run.stdout
    assert "nope.yaml" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not os.path.exists(os.path.join(d, "bad.db")), "a study was made"


def units_match_sims():
    """The driver's size units are `sim`'s (`units::size_multiplier`), spelled alike."""
    sys.path.insert(0, HERE)
    import optuna_tune

    text = open(os.path.join(REPO, "units", "src", "lib.rs")).read()
    body = text[text.index("fn size_multiplier"):]
    body = body[: body.index("_ => return None")]
    rust = {}
    for arm in re.finditer(r"((?:\"[^\"]+\"\s*\|?\s*)+)=>\s*([0-9.e* ]+),", body):
        value = 1.0
        for factor in arm.group(2).split("*"):  # the table's literal products
            value *= float(factor)
        for unit in re.findall(r"\"([^\"]+)\"", arm.group(1)):
            rust[unit] = int(value)
    assert rust and rust == optuna_tune.UNITS, (rust, optuna_tune.UNITS)


if __name__ == "__main__":
    main()
