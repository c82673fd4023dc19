"""Runs a `sim sweep` in shards on a Dask `distributed` cluster and merges them into the CSV one
machine would have written, byte for byte.

Each task runs the `sim` binary on one shard (`--shard K/N`) in a temporary directory of its
worker and returns the part's text; the client writes the parts under --parts-dir and runs
`sim sweep merge`. No storage needs to be shared, but every worker needs the `sim` binary and
the scenario (with any layout it names) at the same paths (a scenario path that exists here is
made absolute). A task that fails is retried (--retries, Dask's own retries); a shard that still
fails does not stop the others: every finished part is kept under --parts-dir, the failures are
listed and nothing is merged, and running the same command again runs only the shards without
a part. Progress goes to stderr as shards finish.

Usage:
  dask_sweep.py --shards N [--scheduler ADDRESS | --local-workers W] [--sim PATH]
                [--parts-dir DIR] [--retries R] -o OUT.csv -- SCENARIO [sim sweep options]

Without --scheduler a LocalCluster of W worker processes (default 2, one thread each) runs on
this machine. The sweep options are `sim sweep`'s: --vary, --reps, --set, --case, --threads.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid


def run_shard(sim, sweep_args, index, count):
    """One shard, in a fresh temporary directory of the worker; returns the part's text."""
    with tempfile.TemporaryDirectory(prefix="sim-dask-shard-") as d:
        out = os.path.join(d, f"part-{index}-of-{count}.csv")
        cmd = [sim, "sweep", *sweep_args, "--shard", f"{index}/{count}", "-o", out]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(
                f"shard {index}/{count}: `{' '.join(cmd)}` exited {done.returncode}: "
                f"{done.stderr.strip()}"
            )
        with open(out, encoding="utf-8", newline="") as f:
            return f.read()


def parse_args(argv):
    if "--" not in argv:
        sys.exit("dask_sweep.py: give the sweep after `--`: -- SCENARIO [sim sweep options]")
    cut = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shards", type=int, required=True, help="N: the number of shards")
    p.add_argument("--scheduler", help="a Dask scheduler's address (default: a LocalCluster)")
    p.add_argument("--local-workers", type=int, default=2, help="LocalCluster worker processes")
    p.add_argument("--sim", default="sim", help="the sim binary, at the same path on every worker")
    p.add_argument("--parts-dir", help="where the parts are written (default: beside OUT)")
    p.add_argument("--retries", type=int, default=2, help="retries of a failed shard")
    p.add_argument("-o", "--output", required=True, help="the merged CSV")
    args = p.parse_args(argv[:cut])
    args.sweep = argv[cut + 1 :]
    if args.shards < 1:
        p.error("--shards must be at least 1")
    if not args.sweep:
        p.error("no scenario after `--`")
    return args


def main(argv):
    args = parse_args(argv)
    from dask.distributed import Client, LocalCluster, as_completed

    sim = os.path.abspath(args.sim) if os.sep in args.sim else args.sim
    # The scenario as every worker must find it: absolute when it exists here.
    sweep = list(args.sweep)
    if os.path.exists(sweep[0]):
        sweep[0] = os.path.abspath(sweep[0])
    parts_dir = args.parts_dir or os.path.splitext(os.path.abspath(args.output))[0] + "-parts"
    os.makedirs(parts_dir, exist_ok=True)
    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(
            n_workers=args.local_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    started = time.monotonic()
    part = lambda k: os.path.join(parts_dir, f"part-{k}-of-{args.shards}.csv")
    # A part is written whole (renamed into place), so one that exists is a finished shard.
    todo = [k for k in range(args.shards) if not os.path.exists(part(k))]
    if len(todo) < args.shards:
        print(
            f"dask_sweep: {args.shards - len(todo)} of {args.shards} parts already in {parts_dir}; "
            f"running the other {len(todo)}",
            file=sys.stderr,
        )
    # Task names unique to this run: two sweeps of N shards on one shared scheduler would
    # otherwise be handed each other's results.
    run_id = uuid.uuid4().hex[:12]
    failures = []
    try:
        futures = {
            client.submit(
                run_shard,
                sim,
                sweep,
                k,
                args.shards,
                key=f"sim-shard-{k}-of-{args.shards}-{run_id}",
                retries=args.retries,
                pure=False,
            ): k
            for k in todo
        }
        for n, fut in enumerate(as_completed(futures), start=1):
            k = futures[fut]
            try:
                text = fut.result()
            except Exception as e:  # a shard that failed for good: the others go on
                failures.append((k, e))
                print(f"dask_sweep: shard {k}/{args.shards} failed: {e}", file=sys.stderr)
                continue
            with open(part(k) + ".tmp", "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.replace(part(k) + ".tmp", part(k))
            print(
                f"dask_sweep: shard {k}/{args.shards} done ({n} of {len(todo)}, "
                f"{time.monotonic() - started:.1f}s)",
                file=sys.stderr,
            )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if failures:
        print(
            f"dask_sweep: {len(failures)} of {args.shards} shards failed "
            f"({', '.join(str(k) for k, _ in sorted(failures))}); the finished parts are in "
            f"{parts_dir}: run the same command again to run only the missing ones",
            file=sys.stderr,
        )
        return 1
    paths = [part(k) for k in range(args.shards)]
    merged = subprocess.run([sim, "sweep", "merge", *paths, "-o", args.output])
    return merged.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
