"""Reading one base file into Arrow by its format (Spark-free): Parquet, or Lance (table version 9).

A Hudi Lance base file is one Lance *file* (not a dataset directory); its schema metadata carries the
same Hudi footer keys as a parquet base file (bloom filter, min/max record key). Lance comes from the
optional `pylance` package (`pip install 'pyhudi[lance]'`); without it, reading a Lance base file is a
`MissingDependencyError` naming the extra. The Spark side (base files as a DataFrame) is
`reader/base_files.py`.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.exceptions import MissingDependencyError
from pyhudi.model.enums import BaseFileFormat
from pyhudi.storage import Storage

LANCE_EXTENSION = BaseFileFormat.LANCE.extension
LANCE_EXTRA = "pip install 'pyhudi[lance]'  (the `pylance` package)"


def lance_file_reader() -> Any:
    """`lance.file.LanceFileReader`, or a clear error naming the extra to install."""
    try:
        from lance.file import LanceFileReader
    except ImportError as err:
        raise MissingDependencyError(
            f"this table stores its base files as Lance (hoodie.table.base.file.format=LANCE); "
            f"reading them needs the optional Lance support: {LANCE_EXTRA}"
        ) from err
    return LanceFileReader


def read_lance_file(storage: Storage, path: str) -> pa.Table:
    """One Lance base file as an Arrow table (remote files are staged in a local temp file)."""
    reader_class = lance_file_reader()
    if storage.is_local:
        return reader_class(path).read_all().to_table()
    with tempfile.TemporaryDirectory(prefix="pyhudi-lance-") as folder:
        local = os.path.join(folder, os.path.basename(path))
        with open(local, "wb") as out:
            out.write(storage.read_bytes(path))
        return reader_class(local).read_all().to_table()


def read_base_file(storage: Storage, path: str, columns: list[str] | None = None) -> pa.Table:
    """A base file of any supported format, by its extension (`columns`: only those, in file order)."""
    if path.endswith(LANCE_EXTENSION):
        table = read_lance_file(storage, path)
        return table if columns is None else table.select(columns)
    with storage.open_input(path) as handle:
        return pq.read_table(handle, columns=columns)
