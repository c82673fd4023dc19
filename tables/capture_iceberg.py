"""Captures a real Iceberg client's requests through the loopback S3 test bed, for
`traces/captured/iceberg/` (its README says what the files are).

Usage: capture_iceberg.py TESTBED_BINARY SIM_BINARY OUT_DIR [--tpch-scale SF] [--work DIR]

1. Starts the test bed (`testbed serve`, no injected delay) on a scratch directory and writes
   TPC-H `lineitem` (DuckDB's `tpch` extension, from its wheel) into it as an Iceberg table with
   pyiceberg, exactly as `make_tables.py` builds it (partitioned by month of `l_shipdate`, one
   append per year), its location `s3://testbed/warehouse/tpch/lineitem`.
2. Restarts the bed on the same directory with the delays `sim check-peers` uses (30 ms round
   trip, 10 MiB/s a connection) and its request log on, and runs TPC-H Q6 once through DuckDB's
   `iceberg` extension (`iceberg_scan` of the table's metadata JSON; the `duckdb-ext-iceberg`,
   `-avro` and `-httpfs` wheels loaded by path, nothing downloaded) at DuckDB's defaults.
3. Writes into OUT_DIR: `tpch-q06-duckdb-iceberg.log` (S3 server access-log lines),
   `tpch-q06-duckdb-iceberg.csv` (the same requests with their Range headers and nanosecond
   times), `tpch-q06-duckdb-iceberg.json` (client, versions, query, result, bed settings, wall
   time), `tpch-q06-duckdb-iceberg.bed.yaml` (the bed as a store model: round trip plus the
   server's median time to a first byte, the paced bandwidth) and `tpch-lineitem.layout`
   (`sim record iceberg` of the table the client read). The same for pyiceberg's own scan
   (`tpch-q06-pyiceberg.*`: the same query as a row filter, read through pyarrow).

Nothing is downloaded; everything but pyiceberg's file names (random UUIDs) is seeded.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_tables  # noqa: E402 (after the path)

CLIENTS = ("duckdb-iceberg", "pyiceberg")
RTT, RTT_NS = "30ms", 30_000_000
BANDWIDTH = "10MiB/s"
Q06 = """SELECT sum(l_extendedprice * l_discount) AS revenue
FROM iceberg_scan('{metadata}')
WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"""


class Bed:
    """A `testbed serve` process and the `key=value` lines it printed."""

    def __init__(self, testbed, root, *extra):
        self.proc = subprocess.Popen([testbed, "serve", "--dir", root, *extra],
                                     stdout=subprocess.PIPE, text=True)
        self.info = {}
        for line in self.proc.stdout:
            key, _, value = line.strip().partition("=")
            self.info[key] = value
            if key == "bandwidth":
                break
        if "endpoint_url" not in self.info:
            sys.exit(f"testbed serve printed no endpoint (exit {self.proc.wait()})")

    def __enter__(self):
        return self

    def __exit__(self, *_):
        # Ctrl-C, not SIGTERM: the bed then writes the last of its request log before it stops.
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)


def s3_properties(info):
    return {
        "s3.endpoint": info["endpoint_url"],
        "s3.access-key-id": info["access_key"],
        "s3.secret-access-key": info["secret_key"],
        "s3.region": info["region"],
    }


def write_lineitem(work, info, scale):
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.transforms import MonthTransform

    cat = SqlCatalog("capture", uri=f"sqlite:///{os.path.join(work, 'catalog.db')}",
                     warehouse=f"s3://{info['bucket']}/warehouse", **s3_properties(info))
    con = make_tables.duckdb_with_tpch()
    con.execute(f"CALL dbgen(sf={scale})")
    arrow = con.execute("SELECT * FROM lineitem ORDER BY l_shipdate").fetch_arrow_table()
    arrow = arrow.cast(make_tables.nullable(arrow.schema))
    cat.create_namespace_if_not_exists("tpch")
    table = cat.create_table("tpch.lineitem", schema=arrow.schema,
                             properties=make_tables.properties())
    with table.update_spec() as spec:
        spec.add_field("l_shipdate", MonthTransform(), "l_shipdate_month")
    for part in make_tables.by_year(arrow, "l_shipdate"):
        table.append(part)
    return cat.load_table("tpch.lineitem").metadata_location


def scan(info, metadata):
    con = make_tables.duckdb_with("httpfs", "avro", "iceberg")
    scheme, host = info["endpoint_url"].split("://", 1)
    con.execute(f"SET s3_endpoint='{host}'")
    con.execute("SET s3_url_style='path'")
    con.execute(f"SET s3_use_ssl={'true' if scheme == 'https' else 'false'}")
    con.execute(f"SET s3_region='{info['region']}'")
    con.execute(f"SET s3_access_key_id='{info['access_key']}'")
    con.execute(f"SET s3_secret_access_key='{info['secret_key']}'")
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    query = Q06.format(metadata=metadata)
    start = time.perf_counter()
    revenue = con.execute(query).fetchone()[0]
    return {"wall_s": round(time.perf_counter() - start, 3), "revenue": float(revenue),
            "duckdb_threads": threads, "query": query}


def scan_pyiceberg(work, info, metadata):
    """The same query through pyiceberg's own scan planning (manifest and partition pruning by
    its row filter) and its pyarrow reader; the sum computed on the Arrow table it returns."""
    import pyarrow.compute as pc
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("capture", uri=f"sqlite:///{os.path.join(work, 'catalog.db')}",
                     **s3_properties(info))
    table = cat.load_table("tpch.lineitem")
    row_filter = ("l_shipdate >= '1994-01-01' and l_shipdate < '1995-01-01' and "
                  "l_discount >= 0.05 and l_discount <= 0.07 and l_quantity < 24")
    start = time.perf_counter()
    arrow = table.scan(row_filter=row_filter,
                       selected_fields=("l_extendedprice", "l_discount")).to_arrow()
    revenue = pc.sum(pc.multiply(arrow["l_extendedprice"], arrow["l_discount"])).as_py()
    return {"wall_s": round(time.perf_counter() - start, 3), "revenue": float(revenue),
            "query": f"table.scan(row_filter=\"{row_filter}\", selected_fields=(\"l_extendedprice\", "
                     "\"l_discount\")).to_arrow(), then sum(l_extendedprice * l_discount)"}


def expected_revenue(root):
    """Q6 over the table's data files read from the bed's directory, every file, no pruning."""
    import duckdb

    files = os.path.join(root, "testbed", "warehouse", "tpch", "lineitem", "data", "*", "*.parquet")
    where = Q06.split("WHERE", 1)[1]
    sql = f"SELECT sum(l_extendedprice * l_discount) FROM read_parquet('{files}') WHERE {where}"
    return float(duckdb.connect().execute(sql).fetchone()[0])


def bed_store(csv_path):
    """The bed as a store model, as `sim check-peers` models it: a first byte of the injected
    round trip plus the median time the server took to answer a GET (its log's first byte less
    its arrival), and the injected per-connection bandwidth."""
    import csv
    import statistics

    with open(csv_path) as f:
        turn = [int(r["first_byte_ns"]) - int(r["start_ns"]) for r in csv.DictReader(f)
                if r["method"] == "GET" and r["key"]]
    first_byte_ns = RTT_NS + int(statistics.median(turn))
    return (
        f"# The loopback test bed of the capture as a store model (tables/capture_iceberg.py):\n"
        f"# {RTT} injected round trip + the server's median {statistics.median(turn) / 1e6:.3f} ms\n"
        f"# to the first byte of a GET ({len(turn)} GETs of {os.path.basename(csv_path)}), and the\n"
        f"# injected {BANDWIDTH} a connection.\n"
        "name: bed\n"
        f"first_byte: {{ distribution: constant, value: {first_byte_ns}ns }}\n"
        f"stream_bandwidth: {{ distribution: constant, value: {BANDWIDTH} }}\n"
        "nic: 100GiB/s\n"
        "retry: { max_attempts: 1, backoff_initial: 25ms, backoff_max: 1s }\n"
        "price: { per_1000_gets_usd: 0.0004 }\n"
    )


def versions():
    from importlib.metadata import version

    return {p: version(p) for p in ("duckdb", "duckdb-ext-httpfs", "duckdb-ext-avro",
                                    "duckdb-ext-iceberg", "duckdb-ext-tpch", "pyiceberg",
                                    "pyarrow")}


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("testbed")
    p.add_argument("sim")
    p.add_argument("out")
    p.add_argument("--tpch-scale", type=float, default=1.0)
    p.add_argument("--work", help="scratch directory (default: a temporary one, removed)")
    args = p.parse_args(argv)
    work = args.work or tempfile.mkdtemp(prefix="sim-capture-")
    try:
        root = os.path.join(work, "s3")
        with Bed(args.testbed, root) as bed:
            metadata = write_lineitem(work, bed.info, args.tpch_scale)
        os.makedirs(args.out, exist_ok=True)
        bucket_prefix = "s3://testbed/"
        local_metadata = os.path.join(root, "testbed", metadata.removeprefix(bucket_prefix))
        layout = os.path.join(args.out, "tpch-lineitem.layout")
        subprocess.run([args.sim, "record", "iceberg", local_metadata, "-o", layout], check=True)
        expected = expected_revenue(root)
        for client in CLIENTS:
            log = os.path.join(work, f"log-{client}")
            with Bed(args.testbed, root, "--rtt", RTT, "--bandwidth", BANDWIDTH, "--log", log) as bed:
                if client == "duckdb-iceberg":
                    ran = scan(bed.info, metadata)
                else:
                    ran = scan_pyiceberg(work, bed.info, metadata)
            name = f"tpch-q06-{client}"
            shutil.copy(os.path.join(log, "access.log"), os.path.join(args.out, f"{name}.log"))
            shutil.copy(os.path.join(log, "requests.csv"), os.path.join(args.out, f"{name}.csv"))
            note = {
                "client": client,
                "versions": versions(),
                "tpch_scale": args.tpch_scale,
                "table_location": "s3://testbed/warehouse/tpch/lineitem",
                "metadata_key": metadata.removeprefix(bucket_prefix),
                "bed": {"rtt": RTT, "bandwidth_per_connection": BANDWIDTH},
                "expected_revenue": expected,
                **ran,
            }
            with open(os.path.join(args.out, f"{name}.json"), "w") as f:
                json.dump(note, f, indent=2, sort_keys=True)
                f.write("\n")
            with open(os.path.join(args.out, f"{name}.bed.yaml"), "w") as f:
                f.write(bed_store(os.path.join(args.out, f"{name}.csv")))
            print(json.dumps(note))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
