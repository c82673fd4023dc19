"""The Dask runner's test (scripts/test-all runs it with the venv's Python): a sweep in 3 shards
on a LocalCluster of two worker processes, one shard failing on its first attempt, merged;
the result must equal the one-machine CSV byte for byte. Then a shard that fails for good: the
other parts are kept and nothing is merged, and the same command again runs only that shard.

Usage: test_dask_sweep.py SIM_BINARY
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SWEEP = [
    os.path.join(REPO, "scenarios", "single-large-file.yaml"),
    "--vary",
    "input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:x4",
    "--reps",
    "1",
]


def main():
    sim = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="sim-dask-test-") as d:
        one = os.path.join(d, "one.csv")
        subprocess.run([sim, "sweep", *SWEEP, "-o", one], check=True, capture_output=True)
        # A sim that fails the first time it runs shard 1/3 (as a worker lost mid-task would).
        marker = os.path.join(d, "failed-once")
        flaky = os.path.join(d, "flaky-sim")
        with open(flaky, "w") as f:
            f.write(
                "#!/usr/bin/env bash\n"
                f'if [[ " $* " == *" 1/3 "* ]] && [ ! -e "{marker}" ]; then\n'
                f'  touch "{marker}"; echo "injected failure" >&2; exit 3\n'
                "fi\n"
                f'exec "{sim}" "$@"\n'
            )
        os.chmod(flaky, 0o755)
        merged = os.path.join(d, "merged.csv")
        run = subprocess.run(
            [
                sys.executable,
                os.path.join(HERE, "dask_sweep.py"),
                "--shards", "3",
                "--local-workers", "2",
                "--sim", flaky,
                "-o", merged,
                "--",
                *SWEEP,
            ],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            sys.exit(f"dask_sweep.py failed ({run.returncode}):\n{run.stderr}")
        assert os.path.exists(marker), "the injected failure never happened"
        for k in range(3):
            assert f"shard {k}/3 done" in run.stderr, run.stderr
        a = open(one, "rb").read()
        b = open(merged, "rb").read()
        if a != b:
            sys.exit(f"the merged CSV differs from the one-machine CSV:\n{a[:400]!r}\n{b[:400]!r}")
        lines = a.decode().count("\n")
        print(f"test_dask_sweep: 3 shards on 2 Dask workers (one retried) = the one-machine CSV ({lines} lines)")

        # Shard 0 fails every time: shards 1 and 2 are kept, nothing is merged.
        broken = os.path.join(d, "broken-sim")
        with open(broken, "w") as f:
            f.write(
                "#!/usr/bin/env bash\n"
                'if [[ " $* " == *" 0/3 "* ]]; then echo "injected failure" >&2; exit 3; fi\n'
                f'exec "{sim}" "$@"\n'
            )
        os.chmod(broken, 0o755)
        again = os.path.join(d, "again.csv")
        dask = lambda sim_path: subprocess.run(
            [
                sys.executable,
                os.path.join(HERE, "dask_sweep.py"),
                "--shards", "3",
                "--local-workers", "2",
                "--retries", "0",
                "--sim", sim_path,
                "-o", again,
                "--",
                *SWEEP,
            ],
            capture_output=True,
            text=True,
        )
        run = dask(broken)
        parts = os.path.join(d, "again-parts")
        assert run.returncode == 1, (run.returncode, run.stderr)
        assert "1 of 3 shards failed (0)" in run.stderr, run.stderr
        assert sorted(os.listdir(parts)) == ["part-1-of-3.csv", "part-2-of-3.csv"], os.listdir(parts)
        assert not os.path.exists(again)
        # The same command again, with a sim that works: only shard 0 runs.
        run = dask(sim)
        assert run.returncode == 0, run.stderr
        assert "2 of 3 parts already" in run.stderr, run.stderr
        assert "shard 0/3 done" in run.stderr and "shard 1/3 done" not in run.stderr, run.stderr
        if open(again, "rb").read() != a:
            sys.exit("the resumed merge differs from the one-machine CSV")
        print("test_dask_sweep: a shard failing for good keeps the others; the rerun runs only it")


if __name__ == "__main__":
    main()
