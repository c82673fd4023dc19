"""Tunes a reader's settings with Optuna over `sim eval`: Optuna's ask/tell loop proposes the
settings, `sim eval` evaluates them (the same objective as `sim tune`: the geometric mean over
the scenarios of the wall time, cost or mix relative to the defaults, memory cap included), and
the study lives in Optuna's RDB storage, so its samplers, `optuna-dashboard` and plots
(`optuna.visualization.plot_optimization_history`, `plot_contour`, `plot_param_importances`)
work on it. With a shared storage URL (PostgreSQL, MySQL) any number of workers on any number
of machines can run this script on one study at once; an SQLite file serves one machine. Each
worker seeds its sampler on its own unless `--seed` is given: give each worker a different one
(workers with one seed propose the same trials). A seeded worker joining a study that already
has trials (a resumed run) seeds with `--seed` plus their count, so that it does not propose
the trials the first run made. The scenarios and `--set` overrides are checked with
`sim validate` before the first trial; five failed trials in a row stop the worker; an
interrupted trial is told to the study as failed.

Usage:
  optuna_tune.py --param NAME=LOW..HIGH[:log] [--param ...] [--trials 40] [--sampler tpe]
                 [--seed N] [--storage sqlite:///optuna-sim.db] [--study NAME] [--sim PATH]
                 [--objective time|cost|mix:W] [--max-memory SIZE] [--arm ARM] [--reps N]
                 [--set PATH=VALUE ...] -- SCENARIO [SCENARIO...]

NAME=LOW..HIGH takes `sim tune`'s syntax: sizes with a unit (`64KiB..16MiB:log`) are searched
as whole bytes, whole numbers (`1..64`) as integers, anything else as a float. At the end the
best trial's settings are printed as JSON, with the `sim run --set` overrides that reproduce it.
Samplers: tpe (default), random, gp (Optuna's GPSampler needs PyTorch, which the test
environment does not install).
"""

import argparse
import json
import re
import subprocess
import sys

# The units `sim` accepts, spelled as it accepts them (`units::size_multiplier` in
# units/src/lib.rs; `test_optuna_tune.py` checks the two tables agree).
UNITS = {
    "B": 1, "b": 1, "bytes": 1, "byte": 1,
    "KB": 10**3, "kB": 10**3, "kb": 10**3,
    "MB": 10**6, "mb": 10**6,
    "GB": 10**9, "gb": 10**9,
    "TB": 10**12, "tb": 10**12,
    "KiB": 2**10, "kib": 2**10, "Ki": 2**10, "K": 2**10, "k": 2**10,
    "MiB": 2**20, "mib": 2**20, "Mi": 2**20, "M": 2**20,
    "GiB": 2**30, "gib": 2**30, "Gi": 2**30, "G": 2**30,
    "TiB": 2**40, "tib": 2**40, "Ti": 2**40, "T": 2**40,
}


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*", text)
    if not m or m.group(2) not in UNITS:
        return None
    return int(float(m.group(1)) * UNITS[m.group(2)])


def parse_param(text):
    """NAME=LOW..HIGH[:log] -> (name, kind, low, high, log)."""
    name, sep, rng = text.partition("=")
    log = rng.endswith(":log")
    rng = rng[: -len(":log")] if log else rng
    low, dots, high = rng.partition("..")
    if not sep or not dots or not name:
        raise SystemExit(f"--param {text}: expected NAME=LOW..HIGH[:log]")
    a, b = parse_size(low), parse_size(high)
    if a is not None and b is not None:
        kind, lo, hi = "bytes", a, b
    elif re.fullmatch(r"-?[0-9]+", low) and re.fullmatch(r"-?[0-9]+", high):
        kind, lo, hi = "int", int(low), int(high)
    else:
        try:
            kind, lo, hi = "float", float(low), float(high)
        except ValueError:
            raise SystemExit(f"--param {text}: LOW and HIGH must be sizes, whole numbers or numbers")
    if not lo < hi or (log and lo <= 0):
        raise SystemExit(f"--param {text}: need LOW < HIGH (and LOW > 0 with :log)")
    return name, kind, lo, hi, log


def suggest(trial, param):
    name, kind, lo, hi, log = param
    if kind == "bytes":
        return f"{trial.suggest_int(name, lo, hi, log=log)}B"
    if kind == "int":
        return trial.suggest_int(name, lo, hi, log=log)
    return trial.suggest_float(name, lo, hi, log=log)


def sampler(name, seed):
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if name == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    raise SystemExit(f"--sampler {name}: tpe, random or gp")


def parse_args(argv):
    if "--" not in argv:
        raise SystemExit("optuna_tune.py: give the scenarios after `--`")
    cut = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--param", action="append", required=True)
    p.add_argument("--trials", type=int, default=40, help="trials this worker runs")
    p.add_argument("--sampler", default="tpe")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the sampler's seed; unset, each worker draws its own (workers on one study must "
        "not share a seed, or each proposes the others' trials); set one per worker to repeat a run",
    )
    p.add_argument("--storage", default="sqlite:///optuna-sim.db")
    p.add_argument("--study", default="sim-tune")
    p.add_argument("--sim", default="sim")
    p.add_argument("--objective", default="time")
    p.add_argument("--max-memory")
    p.add_argument("--arm")
    p.add_argument("--reps", type=int)
    p.add_argument("--set", action="append", default=[])
    args = p.parse_args(argv[:cut])
    args.scenarios = argv[cut + 1 :]
    if not args.scenarios:
        p.error("no scenario after `--`")
    args.params = [parse_param(t) for t in args.param]
    return args


def eval_command(args, settings):
    cmd = [args.sim, "eval", *args.scenarios, "--settings", json.dumps(settings)]
    cmd += ["--objective", args.objective]
    if args.max_memory:
        cmd += ["--max-memory", args.max_memory]
    if args.arm:
        cmd += ["--arm", args.arm]
    if args.reps:
        cmd += ["--reps", str(args.reps)]
    for s in args.set:
        cmd += ["--set", s]
    return cmd


def evaluate(args, settings):
    done = subprocess.run(eval_command(args, settings), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"sim eval {settings}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def check_scenarios(args):
    """`sim validate` on each scenario with the fixed overrides: a bad scenario fails here, not
    in every trial."""
    for scenario in args.scenarios:
        cmd = [args.sim, "validate", scenario]
        for s in args.set:
            cmd += ["--set", s]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"optuna_tune: {' '.join(cmd)}: {done.stderr.strip()}")


MAX_FAILURES_IN_A_ROW = 5


def run_trials(args, study):
    import optuna

    failures_in_a_row = 0
    for _ in range(args.trials):
        trial = study.ask()
        settings = {p[0]: suggest(trial, p) for p in args.params}
        try:
            result = evaluate(args, settings)
        except RuntimeError as e:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            print(f"optuna_tune: trial {trial.number} failed: {e}", file=sys.stderr)
            failures_in_a_row += 1
            if failures_in_a_row == MAX_FAILURES_IN_A_ROW:
                raise SystemExit(f"optuna_tune: {MAX_FAILURES_IN_A_ROW} trials in a row failed; stopping")
            continue
        except BaseException:
            # Interrupted (Ctrl-C): the trial is told, not left RUNNING in the study for good.
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        failures_in_a_row = 0
        trial.set_user_attr("settings", result["settings"])
        trial.set_user_attr("feasible", result["feasible"])
        trial.set_user_attr("scenarios", result["scenarios"])
        study.tell(trial, result["objective"])
        print(
            f"optuna_tune: trial {trial.number}: {result['objective']:.6f} {json.dumps(result['settings'])}",
            file=sys.stderr,
        )


def main(argv):
    args = parse_args(argv)
    import optuna

    check_scenarios(args)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name=args.study,
        storage=args.storage,
        sampler=sampler(args.sampler, args.seed),
        direction="minimize",
        load_if_exists=True,
    )
    existing = len(study.trials)
    if args.seed is not None and existing:
        # A resumed study: the same seed would propose the trials it already has.
        study.sampler = sampler(args.sampler, args.seed + existing)
    run_trials(args, study)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not done:
        print("optuna_tune: no trial of the study completed", file=sys.stderr)
        return 1
    best = study.best_trial
    arm = args.arm or (best.user_attrs["scenarios"][0]["arm"] if best.user_attrs.get("scenarios") else "ARM")
    tuned = [f"arms.{arm}.settings.{k}={v}" for k, v in best.user_attrs.get("settings", {}).items()]
    out = {
        "study": args.study,
        "trials": len(study.trials),
        "best_trial": best.number,
        "objective": best.value,
        "feasible": best.user_attrs.get("feasible"),
        "settings": best.user_attrs.get("settings"),
        "scenarios": best.user_attrs.get("scenarios"),
        # The fixed overrides the trials ran with, then the tuned settings.
        "sim_run_set": [*args.set, *tuned],
        "sim_run_reps": args.reps,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
