"""Compares the tuners on shipped scenarios: how many evaluations `sim tune` (its scans, Halton
points and Nelder-Mead) and Optuna's samplers (TPE; random as the floor) need to come within 1%
of the best point of an exhaustive grid, at the same budget, over several seeds. Prints the
README's table (markdown) on stdout; progress on stderr. About 5 minutes on 2 cores.
(`many-small-files` is not among the scenarios: the objective is flat over these settings
there, so every tuner is within 1% at its first evaluation.) Optuna's GPSampler needs PyTorch,
which the environment does not install, so it is not compared.

Usage: compare_tuners.py SIM_BINARY [--budget 40] [--seeds 3]
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCENARIOS = ["iceberg-bench.yaml", "single-large-file.yaml"]
ARM = "redesign"
PARAMS = [
    ("input_format_parquet_coalesce_gap_bytes", 64 << 10, 16 << 20),
    ("input_format_parquet_min_bytes_in_flight", 8 << 20, 1 << 30),
]
# The grid: 2 values per doubling of each range (17 x 15 = 255 points).
GRID_STEPS_PER_DOUBLING = 2
WITHIN = 1.01


def say(m):
    print(f"compare_tuners: {m}", file=sys.stderr, flush=True)


def grid_values(lo, hi):
    out, i = [], 0
    while True:
        v = round(lo * 2 ** (i / GRID_STEPS_PER_DOUBLING))
        if v > hi:
            return out
        out.append(v)
        i += 1


def sim_eval(sim, scenario, settings):
    cmd = [sim, "eval", scenario, "--settings", json.dumps(settings), "--arm", ARM, "--reps", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["objective"]


def grid_best(sim, scenario):
    best = None
    for a in grid_values(PARAMS[0][1], PARAMS[0][2]):
        for b in grid_values(PARAMS[1][1], PARAMS[1][2]):
            o = sim_eval(sim, scenario, {PARAMS[0][0]: f"{a}B", PARAMS[1][0]: f"{b}B"})
            if best is None or o < best[0]:
                best = (o, a, b)
    return best


def param_args():
    out = []
    for name, lo, hi in PARAMS:
        out += ["--param", f"{name}={lo}B..{hi}B:log"]
    return out


def sim_tune_objectives(sim, scenario, budget, seed, d):
    hist = os.path.join(d, f"tune-{seed}.csv")
    cmd = [sim, "tune", scenario, *param_args(), "--budget", str(budget), "--seed", str(seed)]
    cmd += ["--arm", ARM, "--reps", "1", "--history", hist]
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    with open(hist) as f:
        return [float(r["objective"]) for r in csv.DictReader(f)]


def optuna_objectives(python, sim, scenario, budget, seed, sampler, d):
    import optuna

    storage = f"sqlite:///{os.path.join(d, f'{os.path.basename(scenario)}-{sampler}-{seed}.db')}"
    cmd = [python, os.path.join(HERE, "optuna_tune.py"), *param_args(), "--trials", str(budget)]
    cmd += ["--sampler", sampler, "--seed", str(seed), "--storage", storage, "--study", "cmp"]
    cmd += ["--sim", sim, "--arm", ARM, "--reps", "1", "--", scenario]
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    study = optuna.load_study(study_name="cmp", storage=storage)
    trials = sorted(study.trials, key=lambda t: t.number)
    return [t.value for t in trials if t.value is not None]


def evals_to(objectives, target):
    best = float("inf")
    for i, o in enumerate(objectives, start=1):
        best = min(best, o)
        if best <= target:
            return i
    return None


def cell(counts, budget):
    shown = [str(c) if c is not None else f">{budget}" for c in counts]
    reached = [c for c in counts if c is not None]
    mean = f"; mean {sum(reached) / len(reached):.1f}" if len(reached) == len(counts) else ""
    return ", ".join(shown) + mean


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sim")
    p.add_argument("--budget", type=int, default=40)
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    sim = os.path.abspath(a.sim)
    rows = []
    with tempfile.TemporaryDirectory(prefix="sim-compare-tuners-") as d:
        for name in SCENARIOS:
            scenario = os.path.join(REPO, "scenarios", name)
            say(f"{name}: the grid")
            g = grid_best(sim, scenario)
            n = len(grid_values(PARAMS[0][1], PARAMS[0][2])) * len(grid_values(PARAMS[1][1], PARAMS[1][2]))
            target = g[0] * WITHIN
            counts = {}
            for tuner in ["sim tune", "tpe", "random"]:
                counts[tuner] = []
                for seed in range(1, a.seeds + 1):
                    say(f"{name}: {tuner}, seed {seed}")
                    if tuner == "sim tune":
                        objs = sim_tune_objectives(sim, scenario, a.budget, seed, d)
                    else:
                        objs = optuna_objectives(sys.executable, sim, scenario, a.budget, seed, tuner, d)
                    counts[tuner].append(evals_to(objs, target))
            rows.append((name, n, g, counts))
    print(
        f"| scenario | grid best ({PARAMS[0][0]}, {PARAMS[1][0]}) | `sim tune` | Optuna TPE | Optuna random |"
    )
    print("|---|---|---|---|---|")
    for name, n, g, counts in rows:
        print(
            f"| `{name[:-5]}` | {g[0]:.4f} of the defaults at {g[1] / 1024:.0f} KiB, {g[2] / 2**20:.1f} MiB ({n} points) "
            f"| {cell(counts['sim tune'], a.budget)} | {cell(counts['tpe'], a.budget)} | {cell(counts['random'], a.budget)} |"
        )


if __name__ == "__main__":
    main()
