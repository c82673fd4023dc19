"""Runs a `sim sweep` in shards on a Dask `distributed` cluster and merges them into the CSV one
machine would have written, byte for byte.

Each task runs the `sim` binary on one shard (`--shard K/N`) in a temporary directory of its
worker and returns the part's text; the client writes the parts under --parts-dir and runs
`sim sweep merge`. No storage needs to be shared, but every worker needs the `sim` binary and
the scenario (with any layout it names) at the same paths. A task that fails is retried
(--retries, Dask's own retries); progress goes to stderr as shards finish.

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
    try:
        futures = {
            client.submit(
                run_shard,
                sim,
                args.sweep,
                k,
                args.shards,
                key=f"sim-shard-{k}-of-{args.shards}",
                retries=args.retries,
                pure=False,
            ): k
            for k in range(args.shards)
        }
        paths = []
        for n, fut in enumerate(as_completed(futures), start=1):
            k = futures[fut]
            text = fut.result()
            path = os.path.join(parts_dir, f"part-{k}-of-{args.shards}.csv")
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            paths.append(path)
            print(
                f"dask_sweep: shard {k}/{args.shards} done ({n} of {args.shards}, "
                f"{time.monotonic() - started:.1f}s)",
                file=sys.stderr,
            )
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    paths.sort()
    merged = subprocess.run([sim, "sweep", "merge", *paths, "-o", args.output])
    return merged.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
