"""`pyhudi.write` takes what Python users hand it: a Spark DataFrame, a pandas DataFrame, a
pyarrow Table (or any Arrow stream), with the Arrow types kept; anything else is a clear error."""

from __future__ import annotations

import datetime as dt
import decimal

import pandas as pd
import pyarrow as pa
import pytest
from tests.helpers.builders import trips, trips_options

import pyhudi
from pyhudi.exceptions import SchemaMismatchError, UnsupportedInputError

INSERT = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
UTC = dt.timezone.utc


def _typed_table() -> pa.Table:
    """Trips with a zoned and a zone-less timestamp and two decimals, one row all nulls."""
    return pa.table(
        {
            "uuid": ["id-1", "id-2", "id-3"],
            "city": ["sf", "sf", "chennai"],
            "ts": pa.array([1, 2, 3], pa.int64()),
            "event_time": pa.array(
                [
                    dt.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC),
                    None,
                    dt.datetime(1969, 12, 31, tzinfo=UTC),
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "local_time": pa.array(
                [dt.datetime(2024, 6, 30, 23, 59, 59, 999999), None, dt.datetime(2000, 1, 1)],
                pa.timestamp("us"),
            ),
            "fare": pa.array(
                [decimal.Decimal("12.34"), None, decimal.Decimal("-99999999.99")],
                pa.decimal128(10, 2),
            ),
            "rate": pa.array(
                [
                    decimal.Decimal("0.000000000000000001"),
                    None,
                    decimal.Decimal("12345678901234567890.5"),
                ],
                pa.decimal128(38, 18),
            ),
        }
    )


def test_a_pyarrow_table_round_trips_with_its_timestamp_and_decimal_types(spark, tmp_path):
    path = str(tmp_path / "t")
    table = _typed_table()
    pyhudi.write(table, path, INSERT)
    back = pyhudi.read_arrow(path, columns=table.column_names).sort_by("uuid")
    assert back.schema == table.schema
    assert back.equals(table)
    types = dict(pyhudi.read(spark, path).dtypes)
    assert (types["event_time"], types["local_time"]) == ("timestamp", "timestamp_ntz")
    assert (types["fare"], types["rate"]) == ("decimal(10,2)", "decimal(38,18)")


def test_a_pandas_dataframe_is_written_through_the_active_session(spark, tmp_path):
    path = str(tmp_path / "t")
    frame = pd.DataFrame(trips(0, 6)).set_index("rider")  # the index is left out, as Spark does
    result = pyhudi.write(frame, path, INSERT)
    rows = pyhudi.read(spark, path).select("uuid", "city", "ts", "fare").orderBy("uuid")
    assert [tuple(r) for r in rows.collect()] == [
        (t["uuid"], t["city"], t["ts"], t["fare"]) for t in trips(0, 6)
    ]
    assert "rider" not in pyhudi.read(spark, path).columns
    assert pyhudi.HudiTable(path).latest_instant_time == result.instant_time


def test_an_arrow_stream_is_written(spark, tmp_path):
    path = str(tmp_path / "t")
    table = _typed_table()
    pyhudi.write(pa.RecordBatchReader.from_batches(table.schema, table.to_batches()), path, INSERT)
    assert pyhudi.read_arrow(path, columns=table.column_names).sort_by("uuid").equals(table)


def test_anything_else_is_refused_naming_what_write_takes(tmp_path):
    with pytest.raises(
        UnsupportedInputError, match=r"pandas DataFrame, a pyarrow\.Table"
    ) as raised:
        pyhudi.write(trips(0, 3), str(tmp_path / "t"), INSERT)
    assert isinstance(raised.value, TypeError) and "builtins.list" in str(raised.value)
    assert not (tmp_path / "t").exists()


def test_nanoseconds_spark_cannot_hold_are_refused_not_truncated(spark, tmp_path):
    table = pa.table(
        {
            "uuid": ["id-1"],
            "city": ["sf"],
            "ts": pa.array([1], pa.int64()),
            "at": pa.array([1_700_000_000_123_456_789], pa.timestamp("ns", tz="UTC")),
        }
    )
    with pytest.raises(SchemaMismatchError, match="would lose data"):
        pyhudi.write(table, str(tmp_path / "t"), INSERT)
    whole = table.set_column(
        3, "at", pa.array([1_700_000_000_123_456_000], pa.timestamp("ns", tz="UTC"))
    )
    pyhudi.write(whole, str(tmp_path / "t"), INSERT)
    (value,) = pyhudi.read_arrow(str(tmp_path / "t"), columns=["at"]).column("at").to_pylist()
    assert value == dt.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
