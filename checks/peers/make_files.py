"""Writes the Parquet files `sim check-peers` reads, with pyarrow (a writer other than the
`parquet` crate), deterministically (fixed seeds). Usage: make_files.py OUT_DIR

Shapes (each a directory under OUT_DIR):
- `large/large.parquet`: one file of 64 row groups of about 1 MiB, 24 float64 columns,
  uncompressed, no dictionary: many row groups, plain pages.
- `small/part-NNN.parquet`: 24 files of 437 int32 columns and 400 rows, snappy: wide
  footers (over 64 KiB, so readers with a 64 KiB tail read the footer twice).
- `indexed/indexed.parquet`: one file of 8 row groups, 12 columns (strings with a dictionary,
  ints, floats), zstd, statistics and a page index (column and offset indexes), pages of
  64 KiB.
- `uneven/part-NNN.parquet`: `small`'s files, but file 0 is one row group of 400 rows and the
  others four of 100: file 0 finishes early, which shows how a reader refills the slot it frees
  (asked for by name: `sim check-peers --shape uneven`).
"""

import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def large(out):
    rng = np.random.default_rng(1)
    rows_per_group = 5_461  # 24 columns x 8 bytes x 5,461 rows = about 1 MiB a row group
    groups = 64
    n = rows_per_group * groups
    cols = {f"c{i:02d}": rng.standard_normal(n) for i in range(24)}
    table = pa.table(cols)
    os.makedirs(os.path.join(out, "large"), exist_ok=True)
    pq.write_table(
        table,
        os.path.join(out, "large", "large.parquet"),
        row_group_size=rows_per_group,
        compression="none",
        use_dictionary=False,
        write_statistics=True,
    )


def small(out, name="small", row_groups=lambda f: 1):
    rng = np.random.default_rng(2)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    for f in range(24):
        n = 400
        cols = {
            f"c{i:03d}": pa.array(rng.integers(0, 1 << 20, n, dtype=np.int32))
            for i in range(437)
        }
        pq.write_table(
            pa.table(cols),
            os.path.join(out, name, f"part-{f:03d}.parquet"),
            compression="snappy",
            use_dictionary=False,
            row_group_size=n // row_groups(f),
        )


def uneven(out):
    small(out, "uneven", lambda f: 1 if f == 0 else 4)


def indexed(out):
    rng = np.random.default_rng(3)
    n = 8 * 40_000
    words = np.array([f"word-{i:04d}" for i in range(500)])
    cols = {}
    for i in range(4):
        cols[f"s{i}"] = pa.array(words[rng.integers(0, len(words), n)])
    for i in range(4):
        cols[f"i{i}"] = pa.array(np.sort(rng.integers(0, 1 << 40, n)))
    for i in range(4):
        cols[f"f{i}"] = pa.array(rng.standard_normal(n))
    os.makedirs(os.path.join(out, "indexed"), exist_ok=True)
    pq.write_table(
        pa.table(cols),
        os.path.join(out, "indexed", "indexed.parquet"),
        row_group_size=40_000,
        compression="zstd",
        use_dictionary=[f"s{i}" for i in range(4)],
        write_statistics=True,
        write_page_index=True,
        data_page_size=64 * 1024,
    )


def main():
    out = sys.argv[1]
    large(out)
    small(out)
    indexed(out)
    uneven(out)


if __name__ == "__main__":
    main()
