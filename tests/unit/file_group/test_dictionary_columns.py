"""Which columns a base file dictionary-encodes (`file_group.base_file.dictionary_columns`):
parquet-mr's fallback test on the first rows."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.file_group.base_file import dictionary_columns, dictionary_pays

N = 20_000
TABLE = pa.table(
    {
        "_hoodie_commit_time": pa.repeat("20240101000000000", N).cast(pa.string()),
        "_hoodie_commit_seqno": pa.array([f"s_{i}" for i in range(N)]),
        "_hoodie_record_key": pa.array(["k"] * N),  # never encoded: unique per row in a table
        "key": pa.array([f"key-{i:08d}" for i in range(N)]),
        "rider": pa.array([f"rider-{i % 500}" for i in range(N)]),
        "fare": pa.array([i * 0.5 for i in range(N)]),
        "city_id": pa.array([i % 10 for i in range(N)], pa.int32()),
        "flag": pa.array([i % 2 == 0 for i in range(N)]),
        "empty": pa.nulls(N, pa.string()),
    }
)


def test_repeated_values_get_a_dictionary_unique_ones_do_not():
    assert dictionary_columns(TABLE, True) == ["_hoodie_commit_time", "rider", "city_id", "empty"]


def test_disabled_or_without_rows():
    assert dictionary_columns(TABLE, False) is False
    assert dictionary_columns(None, True) == []
    nested = pa.table({"a": pa.array([[1], [2]])})
    assert dictionary_columns(nested, True) is True


def test_the_test_is_parquet_mrs_dictionary_plus_indices_below_plain():
    assert dictionary_pays(pa.chunked_array([pa.array([1, 2] * 100, pa.int64())]))
    assert not dictionary_pays(pa.chunked_array([pa.array(range(200), pa.int64())]))
    assert not dictionary_pays(pa.chunked_array([pa.array([True, False] * 100)]))


def test_the_columns_chosen_are_the_ones_written_with_a_dictionary_and_smaller():
    def written(use_dictionary: bool | list[str]) -> tuple[set[str], int]:
        sink = io.BytesIO()
        pq.write_table(TABLE, sink, compression="snappy", use_dictionary=use_dictionary)
        group = pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata.row_group(0)
        columns = [group.column(i) for i in range(group.num_columns)]
        return {c.path_in_schema for c in columns if c.has_dictionary_page}, len(sink.getvalue())

    chosen, size = written(dictionary_columns(TABLE, True))
    assert chosen == {"_hoodie_commit_time", "rider", "city_id", "empty"}
    everything = [n for n in TABLE.column_names if n != "flag"]
    assert size < written(everything)[1]
