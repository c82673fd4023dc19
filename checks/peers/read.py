"""Reads Parquet files from the loopback S3 test bed with one real reader, at its defaults, and
prints what it read as one JSON line: `{"reader", "wall_s", "num_rows", "columns"}`. `sim
check-peers` runs it in a fresh process per run. Nothing is downloaded: DuckDB's httpfs comes
from the `duckdb-ext-httpfs` wheel and is loaded by path.

Usage: read.py READER ENDPOINT BUCKET KEY[,KEY...] COLUMN[,COLUMN...]
  READER: pyarrow (pq.read_table, pre_buffer on), pyarrow-no-prebuffer, polars, duckdb
  ENDPOINT: the S3 endpoint, or `file:DIR` to read DIR/KEY from the local file system (the
  check's CPU calibration: the same read with no network; BUCKET is then ignored)
Environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; PEERS_THREADS, when set, the
reader's thread count in place of the machine's cores (`sim check-peers --cpu-count`): Arrow's
CPU pool (`OMP_NUM_THREADS`, read when the pool is made), `POLARS_MAX_THREADS`, DuckDB's
`threads`.

The clock starts after the reader's imports and its client's set-up (work a long-running
process does once) and stops when the table is in memory.
"""

import json
import os
import sys
import time


def pyarrow_read(endpoint, bucket, keys, columns, pre_buffer):
    import pyarrow as pa
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    scheme, host = endpoint.split("://", 1)
    fs = pafs.S3FileSystem(
        access_key=os.environ["AWS_ACCESS_KEY_ID"],
        secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        region=os.environ["AWS_REGION"],
        endpoint_override=host,
        scheme=scheme,
    )
    paths = [f"{bucket}/{k}" for k in keys]
    # Warm up on a file in memory: read_table imports what it needs lazily (pandas, when it is
    # installed, about 0.4 s), work a long-running process does once.
    import io

    buf = io.BytesIO()
    pq.write_table(pa.table({"x": [1]}), buf)
    pq.read_table(pa.BufferReader(buf.getvalue()))
    start = time.perf_counter()
    source = paths[0] if len(paths) == 1 else paths
    t = pq.read_table(source, columns=columns, filesystem=fs, pre_buffer=pre_buffer)
    return time.perf_counter() - start, t.num_rows, t.num_columns


def polars_read(endpoint, bucket, keys, columns):
    import polars as pl

    opts = {
        "aws_endpoint_url": endpoint,
        "aws_access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "aws_region": os.environ["AWS_REGION"],
        "aws_allow_http": "true",
        "aws_virtual_hosted_style_request": "false",
    }
    urls = [f"s3://{bucket}/{k}" for k in keys]
    start = time.perf_counter()
    df = pl.scan_parquet(urls if len(urls) > 1 else urls[0], storage_options=opts).select(columns).collect()
    return time.perf_counter() - start, df.height, df.width


def duckdb_read(endpoint, bucket, keys, columns):
    import duckdb
    import duckdb_ext
    # `to_arrow_table()` imports pyarrow the first time it runs (about 55 ms here, measured
    # 2026-12-06): work a long-running process does once, so it is done before the clock.
    import pyarrow  # noqa: F401

    ext = os.path.join(
        list(duckdb_ext.__path__)[0],
        "extensions",
        f"v{duckdb.__version__}",
        "linux_amd64",
        "httpfs.duckdb_extension",
    )
    con = duckdb.connect(config={
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    })
    con.execute(f"LOAD '{ext}'")
    set_duckdb_threads(con)
    scheme, host = endpoint.split("://", 1)
    con.execute(f"SET s3_endpoint='{host}'")
    con.execute("SET s3_url_style='path'")
    con.execute(f"SET s3_use_ssl={'true' if scheme == 'https' else 'false'}")
    con.execute(f"SET s3_region='{os.environ['AWS_REGION']}'")
    con.execute(f"SET s3_access_key_id='{os.environ['AWS_ACCESS_KEY_ID']}'")
    con.execute(f"SET s3_secret_access_key='{os.environ['AWS_SECRET_ACCESS_KEY']}'")
    files = ", ".join(f"'s3://{bucket}/{k}'" for k in keys)
    cols = ", ".join(f'"{c}"' for c in columns)
    start = time.perf_counter()
    # `to_arrow_table()` on a relation: DuckDB's Python API for "execute and fetch all rows as
    # an Arrow Table", which collects with `PhysicalArrowCollector` (a materialized result, scanned
    # in parallel). Not `execute(...).fetch_arrow_table()`: that streams the result through
    # `PhysicalBufferedCollector`, whose first-chunk blocking made the scan bimodal on this bed
    # (one scanner in about half the runs; README, "The peer presets").
    t = con.sql(f"SELECT {cols} FROM read_parquet([{files}])").to_arrow_table()
    return time.perf_counter() - start, t.num_rows, t.num_columns


def set_duckdb_threads(con):
    threads = os.environ.get("PEERS_THREADS")
    if threads:
        con.execute(f"SET threads={int(threads)}")


def local_read(reader, root, keys, columns):
    paths = [os.path.join(root, k) for k in keys]
    if reader in ("pyarrow", "pyarrow-no-prebuffer"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        buf = pa.BufferOutputStream()
        pq.write_table(pa.table({"x": [1]}), buf)
        pq.read_table(pa.BufferReader(buf.getvalue()))
        start = time.perf_counter()
        source = paths[0] if len(paths) == 1 else paths
        t = pq.read_table(source, columns=columns, pre_buffer=reader == "pyarrow")
        return time.perf_counter() - start, t.num_rows, t.num_columns
    if reader == "polars":
        import polars as pl

        start = time.perf_counter()
        df = pl.scan_parquet(paths if len(paths) > 1 else paths[0]).select(columns).collect()
        return time.perf_counter() - start, df.height, df.width
    if reader == "duckdb":
        import duckdb
        import pyarrow  # noqa: F401 (as in duckdb_read: before the clock)

        con = duckdb.connect()
        set_duckdb_threads(con)
        files = ", ".join(f"'{p}'" for p in paths)
        cols = ", ".join(f'"{c}"' for c in columns)
        start = time.perf_counter()
        t = con.sql(f"SELECT {cols} FROM read_parquet([{files}])").to_arrow_table()
        return time.perf_counter() - start, t.num_rows, t.num_columns
    sys.exit(f"unknown reader `{reader}`: pyarrow, pyarrow-no-prebuffer, polars, duckdb")


def main():
    reader, endpoint, bucket, keys, columns = sys.argv[1:6]
    threads = os.environ.get("PEERS_THREADS")
    if threads:
        # Before any reader is imported: both read these when their pools are made.
        os.environ["OMP_NUM_THREADS"] = str(int(threads))
        os.environ["POLARS_MAX_THREADS"] = str(int(threads))
    keys = keys.split(",")
    columns = columns.split(",")
    if endpoint.startswith("file:"):
        wall, rows, cols = local_read(reader, endpoint[len("file:"):], keys, columns)
    elif reader == "pyarrow":
        wall, rows, cols = pyarrow_read(endpoint, bucket, keys, columns, True)
    elif reader == "pyarrow-no-prebuffer":
        wall, rows, cols = pyarrow_read(endpoint, bucket, keys, columns, False)
    elif reader == "polars":
        wall, rows, cols = polars_read(endpoint, bucket, keys, columns)
    elif reader == "duckdb":
        wall, rows, cols = duckdb_read(endpoint, bucket, keys, columns)
    else:
        sys.exit(f"unknown reader `{reader}`: pyarrow, pyarrow-no-prebuffer, polars, duckdb")
    print(json.dumps({"reader": reader, "wall_s": wall, "num_rows": rows, "columns": cols}))


if __name__ == "__main__":
    main()
