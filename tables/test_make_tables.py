"""The test of tables/make_tables.py and of what `sim record iceberg` makes of its tables
(scripts/test-all runs it with the venv's Python): the tables built at a small scale, offline;
each recorded; the shipped scenarios run on the small recordings; partition pruning by the
queries' predicates compared with pyiceberg's own scan planning; the table with an added and a renamed column queried; and
`capture_iceberg.py` run at a small scale (DuckDB's iceberg extension and pyiceberg through the
test bed), its captures replayed and re-planned by `sim replay`.

Usage: test_make_tables.py SIM_BINARY TESTBED_BINARY
"""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def files_per_query(sim, scenario, layout):
    """{query: files} as `sim validate` resolves the scenario on `layout`."""
    out = run(sim, "validate", scenario, "--set", f"table.layout={layout}")
    found = dict(re.findall(r"query (\S+): \d+ columns over (\d+) files", out))
    return {q: int(n) for q, n in found.items()}


def pyiceberg_files(catalog, name, row_filter):
    return len(list(catalog.load_table(name).scan(row_filter=row_filter).plan_files()))


def main():
    sim = os.path.abspath(sys.argv[1])
    testbed = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="sim-tables-test-") as d:
        out = run(
            sys.executable, os.path.join(HERE, "make_tables.py"), d,
            "--tpch-scale", "0.01", "--wide-files", "100", "--wide-columns", "130",
        )
        tables = dict(line.split(" ", 1) for line in out.splitlines())
        assert set(tables) == {"tpch.lineitem", "tpch.orders", "wide.events", "evolve.items"}, tables
        layouts = {}
        for name, metadata in tables.items():
            layouts[name] = os.path.join(d, name.replace(".", "-") + ".layout")
            run(sim, "record", "iceberg", metadata, "-o", layouts[name])

        import make_tables

        catalog = make_tables.catalog(d)
        ours = files_per_query(sim, os.path.join(REPO, "scenarios", "tpch-iceberg.yaml"),
                               layouts["tpch.lineitem"])
        q06 = ("l_shipdate >= '1994-01-01' and l_shipdate < '1995-01-01' "
               "and l_discount >= 0.05 and l_discount <= 0.07 and l_quantity < 24")
        q12 = ("l_shipmode in ('MAIL', 'SHIP') and l_receiptdate >= '1994-01-01' "
               "and l_receiptdate < '1995-01-01'")
        theirs = {
            "q01": pyiceberg_files(catalog, "tpch.lineitem", "l_shipdate <= '1998-09-02'"),
            "q06": pyiceberg_files(catalog, "tpch.lineitem", q06),
            "q12": pyiceberg_files(catalog, "tpch.lineitem", q12),
            "q14": pyiceberg_files(
                catalog, "tpch.lineitem", "l_shipdate >= '1995-09-01' and l_shipdate < '1995-10-01'"),
            "q15": pyiceberg_files(
                catalog, "tpch.lineitem", "l_shipdate >= '1996-01-01' and l_shipdate < '1996-04-01'"),
        }
        # The scenario's predicates, judged against the recorded row-group statistics, plan the
        # files pyiceberg's scan plans from its manifests (partition values and column bounds).
        assert ours == theirs, f"files per query, sim validate {ours} vs pyiceberg {theirs}"
        assert 0 < ours["q14"] < ours["q06"] < ours["q01"], ours

        # The shipped scenarios run on the small recordings.
        for scenario, table in (("tpch-iceberg.yaml", "tpch.lineitem"),
                                ("many-small-files-iceberg.yaml", "wide.events")):
            report = json.loads(run(sim, "run", os.path.join(REPO, "scenarios", scenario),
                                    "--set", f"table.layout={layouts[table]}", "--json"))
            assert report["cases"], scenario

        # Schema evolution: `price` was added after the first file and `qty` renamed
        # `quantity` after the second; both resolve across all three files.
        evolve = os.path.join(d, "evolve.yaml")
        with open(evolve, "w") as f:
            f.write(
                "name: evolve\n"
                f"table: {{ layout: {layouts['evolve.items']} }}\n"
                "queries:\n"
                "  - { name: price, columns: [price] }\n"
                "  - { name: quantity, columns: [quantity] }\n"
                "store: s3-standard\n"
                "arms: [{ name: base, strategy: clickhouse-base }]\n"
            )
        assert files_per_query(sim, evolve, layouts["evolve.items"]) == {"price": 3, "quantity": 3}
        report = json.loads(run(sim, "run", evolve, "--json"))
        assert report["cases"], report
        check_capture(sim, testbed, os.path.join(d, "captured"))
    print("make_tables: tables built, recorded, pruned as pyiceberg prunes, evolution resolved; "
          "captures made, replayed and re-planned", file=sys.stderr)


def check_capture(sim, testbed, out):
    """capture_iceberg.py at SF 0.01: both clients' requests logged whole, pyiceberg's answer
    right, and each capture re-planned from the recorded layout, its own preset first."""
    run(sys.executable, os.path.join(HERE, "capture_iceberg.py"), testbed, sim, out,
        "--tpch-scale", "0.01")
    columns = "l_quantity,l_extendedprice,l_discount,l_shipdate"
    for client, preset in (("duckdb-iceberg", "duckdb"), ("pyiceberg", "arrow-cpp")):
        with open(os.path.join(out, f"tpch-q06-{client}.json")) as f:
            note = json.load(f)
        if client == "pyiceberg":
            assert abs(note["revenue"] - note["expected_revenue"]) < 1e-6, note
        else:
            # DuckDB 1.4.4's iceberg extension prunes month partitions by days / 30
            # (duckdb-iceberg#699): it misses the first months of 1994. Say so if it is fixed.
            assert note["revenue"] < note["expected_revenue"], \
                f"DuckDB's answer is right now: update traces/captured/iceberg/README.md: {note}"
        with open(os.path.join(out, f"tpch-q06-{client}.csv")) as f:
            rows = sum(1 for _ in f) - 1
        summary = subprocess.run(
            [sim, "replay", os.path.join(out, f"tpch-q06-{client}.csv"), "--strict",
             "--model", os.path.join(out, f"tpch-q06-{client}.bed.yaml")],
            capture_output=True, text=True)
        assert summary.returncode == 0, summary.stderr
        assert f"{rows} records from {rows} lines (RequestLog), 0 malformed" in summary.stderr, \
            summary.stderr
        table = run(sim, "replay", os.path.join(out, f"tpch-q06-{client}.csv"),
                    "--model", os.path.join(out, f"tpch-q06-{client}.bed.yaml"),
                    "--layout", os.path.join(out, "tpch-lineitem.layout"), "--columns", columns,
                    "--what-if", preset, "--what-if", "clickhouse-redesign")
        names = [line.split("  ")[0] for line in table.splitlines()[2:5]]
        assert names == ["recorded (arm recorded)", preset, "clickhouse-redesign"], table


if __name__ == "__main__":
    main()
