"""Row-group pruning by recorded statistics, compared with the real readers (scripts/test-all
runs it with the venv's Python).

TPC-H lineitem (SF 0.05, DuckDB's tpch extension) sorted by `l_shipdate` is written by two
writers with small row groups: pyarrow (`row_group_size` 5,000) and DuckDB (`ROW_GROUP_SIZE`
4,096). Each file is recorded with
`sim record parquet`, and for each predicate the row groups `sim prune` keeps are compared with
the ones pyarrow's dataset keeps (`ParquetFileFragment.split_by_row_group(filter)`, which
drops row groups by their footer statistics), exactly, row group by row group; DuckDB is
asked how many rows its answer has, which must lie in the kept row groups (a sanity check
on the predicates themselves). The mechanism-off companion: with the predicate negated on the
sorted column, the kept set changes (so the check can fail).

Usage: test_prune.py SIM_BINARY
"""

import datetime
import os
import subprocess
import sys
import tempfile

import pyarrow.dataset as ds
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_tables  # noqa: E402

D = datetime.date

# (sim's text, pyarrow's expression, DuckDB's WHERE). Dates on the sorted column prune; the
# decimal and string terms prune little on their own (TPC-H spreads them evenly), and the
# conjunction prunes as its sharpest term.
PREDICATES = [
    ("l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'",
     (ds.field("l_shipdate") >= D(1994, 1, 1)) & (ds.field("l_shipdate") < D(1995, 1, 1)),
     "l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'"),
    ("l_shipdate <= '1992-03-15'",
     ds.field("l_shipdate") <= D(1992, 3, 15),
     "l_shipdate <= date '1992-03-15'"),
    ("l_shipdate between '1995-09-01' and '1995-09-30' and l_discount between 0.05 and 0.07",
     (ds.field("l_shipdate") >= D(1995, 9, 1)) & (ds.field("l_shipdate") <= D(1995, 9, 30))
     & (ds.field("l_discount") >= 0.05) & (ds.field("l_discount") <= 0.07),
     "l_shipdate between date '1995-09-01' and date '1995-09-30' "
     "and l_discount between 0.05 and 0.07"),
    ("l_shipdate = '1998-12-01'",
     ds.field("l_shipdate") == D(1998, 12, 1),
     "l_shipdate = date '1998-12-01'"),
    ("l_orderkey > 100000000",
     ds.field("l_orderkey") > 100_000_000,
     "l_orderkey > 100000000"),
    ("l_shipmode in ('AIR', 'MAIL') and l_shipdate > '1998-06-01'",
     ds.field("l_shipmode").isin(["AIR", "MAIL"]) & (ds.field("l_shipdate") > D(1998, 6, 1)),
     "l_shipmode in ('AIR', 'MAIL') and l_shipdate > date '1998-06-01'"),
]

NEGATED = ("l_shipdate < date '1994-01-01'",
           ds.field("l_shipdate") < D(1994, 1, 1))


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def sim_kept(sim, layout, text):
    rows = run(sim, "prune", layout, "--where", text).splitlines()[1:]
    return [int(r.split(",")[2]) for r in rows if r.endswith(",1")]


def pyarrow_kept(path, expr):
    fragment = next(ds.dataset(path, format="parquet").get_fragments())
    return sorted(f.row_groups[0].id for f in fragment.split_by_row_group(filter=expr))


def write_files(d):
    con = make_tables.duckdb_with_tpch()
    con.execute("CALL dbgen(sf=0.05)")
    sorted_sql = "SELECT * FROM lineitem ORDER BY l_shipdate, l_orderkey"
    files = {"pyarrow": os.path.join(d, "lineitem-pyarrow.parquet"),
             "duckdb": os.path.join(d, "lineitem-duckdb.parquet")}
    pq.write_table(con.execute(sorted_sql).fetch_arrow_table(), files["pyarrow"],
                   row_group_size=5_000)
    con.execute(f"COPY ({sorted_sql}) TO '{files['duckdb']}' "
                "(FORMAT parquet, ROW_GROUP_SIZE 4096)")
    return con, files


def main():
    sim = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="sim-prune-test-") as d:
        con, files = write_files(d)
        compared, counts = 0, {}
        for writer, path in files.items():
            layout = os.path.join(d, f"{writer}.layout")
            run(sim, "record", "parquet", path, "-o", layout)
            groups = pq.ParquetFile(path).metadata.num_row_groups
            assert groups >= 20, (writer, groups)
            counts[writer] = groups
            for text, expr, where in PREDICATES:
                ours, theirs = sim_kept(sim, layout, text), pyarrow_kept(path, expr)
                assert ours == theirs, f"{writer}: `{text}`: sim keeps {ours}, pyarrow {theirs}"
                # The answer's rows lie in the kept row groups: rows in them bound it.
                answer = con.execute(
                    f"SELECT count(*) FROM read_parquet('{path}') WHERE {where}").fetchone()[0]
                md = pq.ParquetFile(path).metadata
                kept_rows = sum(md.row_group(g).num_rows for g in ours)
                assert answer <= kept_rows, (writer, text, answer, kept_rows)
                compared += 1
            # Mechanism-off companion: another predicate keeps other row groups.
            year = sim_kept(sim, layout, PREDICATES[0][0])
            before = sim_kept(sim, layout, NEGATED[0])
            assert before == pyarrow_kept(path, NEGATED[1]) and before != year, (before, year)
            assert 0 < len(year) < groups, (writer, len(year), groups)
            # The predicate past every key keeps nothing (the README says one does).
            nothing = sim_kept(sim, layout, "l_orderkey > 100000000")
            assert nothing == [], (writer, nothing)
    print(f"prune: {compared} predicate x file pairs keep exactly pyarrow's row groups "
          f"(row groups per writer: {counts})", file=sys.stderr)


if __name__ == "__main__":
    main()
