"""Small builders for test tables: options, rows and DataFrames."""

from __future__ import annotations

import datetime as dt
from typing import Any

TRIPS_SCHEMA = "uuid string, city string, ts long, rider string, fare double"


def trips_options(name: str = "trips", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": name,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        **extra,
    }


def trip(i: int, ts: int = 1, city: str | None = None, fare: float | None = None) -> dict[str, Any]:
    cities = ("sf", "chennai", "sao_paulo")
    return {
        "uuid": f"id-{i:05d}",
        "city": city if city is not None else cities[i % 3],
        "ts": ts,
        "rider": f"rider-{i % 7}",
        "fare": fare if fare is not None else float(i) + ts / 10,
    }


def trips(start: int, count: int, ts: int = 1, **kwargs: Any) -> list[dict[str, Any]]:
    return [trip(i, ts, **kwargs) for i in range(start, start + count)]


def df_of(spark, rows: list[dict[str, Any]], schema: str = TRIPS_SCHEMA):  # type: ignore[no-untyped-def]
    columns = [c.strip().split(" ")[0] for c in schema.split(",")]
    return spark.createDataFrame([tuple(r.get(c) for c in columns) for r in rows], schema)


UTC = dt.timezone.utc
