"""Builds real Iceberg tables offline, with writers other than this project's, for
`sim record iceberg` to record (`traces/layouts/`, `tables/README.md`).

Usage: make_tables.py OUT_DIR [--tpch-scale SF] [--wide-files N] [--wide-columns C]

Writes, under OUT_DIR, a pyiceberg SQLite catalog (`catalog.db`) and a warehouse
(`warehouse/`) holding four tables, and prints one line per table, `NAME METADATA_JSON`:

- `tpch.lineitem`, `tpch.orders`: TPC-H data from DuckDB's `tpch` extension (the
  `duckdb-ext-tpch` wheel, loaded by path: nothing is downloaded), written by pyiceberg
  (pyarrow's Parquet writer), partitioned by month of `l_shipdate` / `o_orderdate`, one append
  (one snapshot, one manifest) per calendar year, so the metadata phase has a manifest list of
  several manifests;
- `wide.events`: the many-small-files shape (`docs/findings.md` F4): C columns (default 437:
  int64, float64 and string in turn), N small files (default 2,000) appended in batches of 50
  files (one per value of the identity-partitioned `part` column), one snapshot per batch;
- `evolve.items`: schema evolution: files written before and after a column is added
  (`price`) and another renamed (`qty` -> `quantity`), so the files differ in their columns and
  only Iceberg field ids match them.

Everything is seeded: the same arguments give the same rows (pyiceberg's file names and
snapshot ids are random UUIDs, so the files' names differ between runs, not their layouts'
shape).
"""

import argparse
import datetime
import os
import sys

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute below)
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.transforms import IdentityTransform, MonthTransform
from pyiceberg.types import DoubleType

# pyiceberg writes a row group per this many rows; its default (1 Mi rows) would make one
# row group per file at every scale used here. 64 Ki rows is in the range real writers use.
ROW_GROUP_ROWS = 65_536


def duckdb_with(*extensions):
    """A DuckDB connection with `extensions` loaded by path from their `duckdb-ext-*` wheels
    (autoinstall and autoload off: nothing is downloaded)."""
    import duckdb_ext

    root = os.path.join(list(duckdb_ext.__path__)[0], "extensions", f"v{duckdb.__version__}",
                        "linux_amd64")
    con = duckdb.connect(config={
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    })
    for e in extensions:
        con.execute(f"LOAD '{os.path.join(root, e)}.duckdb_extension'")
    return con


def duckdb_with_tpch():
    return duckdb_with("tpch")


def catalog(out):
    warehouse = os.path.join(out, "warehouse")
    os.makedirs(warehouse, exist_ok=True)
    return SqlCatalog(
        "tables",
        uri=f"sqlite:///{os.path.join(out, 'catalog.db')}",
        warehouse=f"file://{os.path.abspath(warehouse)}",
    )


def properties():
    return {
        "write.parquet.row-group-limit": str(ROW_GROUP_ROWS),
        "write.parquet.compression-codec": "zstd",
    }


def by_year(arrow, column):
    """The table's rows split by calendar year of `column`, in year order."""
    years = pa.compute.year(arrow[column])
    for y in sorted(set(years.to_pylist())):
        yield arrow.filter(pa.compute.equal(years, y))


def tpch(cat, scale):
    con = duckdb_with_tpch()
    con.execute(f"CALL dbgen(sf={scale})")
    cat.create_namespace_if_not_exists("tpch")
    made = []
    for name, date_column in (("lineitem", "l_shipdate"), ("orders", "o_orderdate")):
        arrow = con.execute(f"SELECT * FROM {name} ORDER BY {date_column}").fetch_arrow_table()
        arrow = arrow.cast(nullable(arrow.schema))
        table = cat.create_table(f"tpch.{name}", schema=arrow.schema, properties=properties())
        with table.update_spec() as spec:
            spec.add_field(date_column, MonthTransform(), f"{date_column}_month")
        for part in by_year(arrow, date_column):
            table.append(part)
        made.append((f"tpch.{name}", table))
    return made


def nullable(schema):
    """pyiceberg refuses required Arrow fields for optional Iceberg ones; DuckDB marks none
    required, but be explicit."""
    return pa.schema([pa.field(f.name, f.type, nullable=True) for f in schema])


def wide(cat, files, columns):
    rng = np.random.default_rng(4)
    cat.create_namespace_if_not_exists("wide")
    parts_per_batch = 50
    rows_per_file = 40
    names = [f"c{i:03d}" for i in range(columns)]

    def batch(b):
        n = rows_per_file * parts_per_batch
        cols = {"part": pa.array(np.repeat(np.arange(parts_per_batch, dtype=np.int64), rows_per_file))}
        day = datetime.date(2026, 1, 1) + datetime.timedelta(days=b)
        cols["day"] = pa.array([day] * n, pa.date32())
        for i, c in enumerate(names):
            kind = i % 3
            if kind == 0:
                cols[c] = pa.array(rng.integers(0, 1 << 40, n))
            elif kind == 1:
                cols[c] = pa.array(rng.standard_normal(n))
            else:
                cols[c] = pa.array([f"v{v}" for v in rng.integers(0, 1000, n)])
        return pa.table(cols)

    first = batch(0)
    table = cat.create_table("wide.events", schema=nullable(first.schema), properties=properties())
    with table.update_spec() as spec:
        spec.add_field("part", IdentityTransform(), "part")
    batches = max(1, files // parts_per_batch)
    for b in range(batches):
        table.append(first if b == 0 else batch(b))
    return [("wide.events", table)]


def evolve(cat):
    rng = np.random.default_rng(5)
    cat.create_namespace_if_not_exists("evolve")

    def rows(start, n, extra):
        cols = {
            "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
            "name": pa.array([f"item-{i}" for i in range(start, start + n)]),
            extra[0]: pa.array(rng.integers(1, 100, n)),
        }
        for c in extra[1:]:
            cols[c] = pa.array(rng.uniform(1, 500, n))
        return pa.table(cols)

    first = rows(0, 200_000, ["qty"])
    table = cat.create_table("evolve.items", schema=nullable(first.schema), properties=properties())
    table.append(first)
    with table.update_schema() as update:
        update.add_column("price", DoubleType())
    table.append(rows(200_000, 150_000, ["qty", "price"]))
    with table.update_schema() as update:
        update.rename_column("qty", "quantity")
    table.append(rows(350_000, 100_000, ["quantity", "price"]))
    return [("evolve.items", table)]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--tpch-scale", type=float, default=1.0)
    p.add_argument("--wide-files", type=int, default=2000)
    p.add_argument("--wide-columns", type=int, default=437)
    args = p.parse_args(argv)
    if os.path.exists(os.path.join(args.out, "catalog.db")):
        sys.exit(f"{args.out} already holds a catalog; give an empty or new directory")
    os.makedirs(args.out, exist_ok=True)
    cat = catalog(args.out)
    made = tpch(cat, args.tpch_scale)
    made += wide(cat, args.wide_files, args.wide_columns)
    made += evolve(cat)
    for name, table in made:
        table = cat.load_table(name)
        print(name, table.metadata_location.removeprefix("file://"))


if __name__ == "__main__":
    main(sys.argv[1:])
