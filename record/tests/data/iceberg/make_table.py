#!/usr/bin/env python3
"""Writes the small Iceberg table the `record` crate's tests record, with an independent writer.

pyiceberg (SQLite catalog, local filesystem) writes table `db.events` in a temporary warehouse
by four appends (one data file and one manifest each), then the table directory is copied to
`events/` beside this script and the warehouse is deleted. The metadata inside still names the temporary warehouse (file:///tmp/...), which no
longer exists: the recorder must resolve those paths relative to the table directory.

`expected.json` records what pyiceberg itself reports: the metadata JSON, the manifest list,
every manifest (path, length, content) and every live data file (path, size, record count), all
paths relative to the table location. The Rust test compares the recording with it, so CI needs
no Python.

Set-up:
    python3 -m venv /tmp/icevenv && /tmp/icevenv/bin/pip install 'pyiceberg[sql-sqlite,pyarrow]'
    /tmp/icevenv/bin/python record/tests/data/iceberg/make_table.py
"""

import json
import os
import shutil
import tempfile

import pyarrow as pa
import pyiceberg
from pyiceberg.catalog.sql import SqlCatalog

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "events")
APPENDS = 4
ROWS_PER_APPEND = [300, 500, 200, 1000]


def batch(i, rows):
    # Deterministic values: no randomness, so reruns differ only in ids and timestamps.
    return pa.table(
        {
            "id": pa.array(range(i * 10_000, i * 10_000 + rows), pa.int64()),
            "kind": pa.array([f"kind-{(n * 7 + i) % 13}" for n in range(rows)], pa.string()),
            "value": pa.array([(n * 31 + i) % 1000 / 10.0 for n in range(rows)], pa.float64()),
        }
    )


def relative(location, path):
    prefix = location.rstrip("/") + "/"
    assert path.startswith(prefix), (path, location)
    return path[len(prefix):]


def main():
    with tempfile.TemporaryDirectory(prefix="iceberg-warehouse-") as warehouse:
        catalog = SqlCatalog(
            "local",
            uri=f"sqlite:///{warehouse}/catalog.db",
            warehouse=f"file://{warehouse}",
        )
        catalog.create_namespace("db")
        table = catalog.create_table("db.events", schema=batch(0, 1).schema)
        for i, rows in enumerate(ROWS_PER_APPEND[:APPENDS]):
            table.append(batch(i, rows))
        table = catalog.load_table("db.events")

        location = table.location()
        snapshot = table.current_snapshot()
        manifests = snapshot.manifests(table.io)
        data_files = []
        for task in table.scan().plan_files():
            f = task.file
            data_files.append(
                {
                    "path": relative(location, f.file_path),
                    "file_size_in_bytes": f.file_size_in_bytes,
                    "record_count": f.record_count,
                }
            )
        expected = {
            "writer": f"pyiceberg {pyiceberg.__version__}, pyarrow {pa.__version__}",
            "location": location,
            "metadata_json": relative(location, table.metadata_location),
            "format_version": table.metadata.format_version,
            "manifest_list": relative(location, snapshot.manifest_list),
            "manifest_count": len(manifests),
            "manifests": [
                {
                    "path": relative(location, m.manifest_path),
                    "manifest_length": m.manifest_length,
                    "content": int(m.content),
                }
                for m in manifests
            ],
            "data_files": sorted(data_files, key=lambda d: d["path"]),
            "total_records": sum(ROWS_PER_APPEND[:APPENDS]),
        }

        table_dir = location[len("file://"):] if location.startswith("file://") else location
        if os.path.exists(OUT):
            shutil.rmtree(OUT)
        shutil.copytree(table_dir, OUT)
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUT} and expected.json: {len(data_files)} data files, {len(manifests)} manifests")


if __name__ == "__main__":
    main()
