"""The TimestampBased key generator as Spark expressions, independent of the session time zone.

Every input becomes epoch microseconds of a UTC instant first; the output wall clock is then
`TIMESTAMP_NTZ '1970-01-01' + micros`, shifted with `convert_timezone('UTC', outputZone, ...)`
and formatted with `date_format`, which applies no zone to TIMESTAMP_NTZ values.
"""

from __future__ import annotations

import re

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.exceptions import ConfigError
from pyhudi.keygen.spec import TimestampOptions

_EPOCH_NTZ = "TIMESTAMP_NTZ'1970-01-01 00:00:00'"
_UNIT_MICROS = {
    "NANOSECONDS": 0.001,
    "MICROSECONDS": 1,
    "MILLISECONDS": 1_000,
    "SECONDS": 1_000_000,
    "MINUTES": 60_000_000,
    "HOURS": 3_600_000_000,
    "DAYS": 86_400_000_000,
}
_ZONE_LETTERS = re.compile(r"(?<!')(Z+|X+|z+|x+|O+|VV)(?!')")


def java_to_spark_pattern(pattern: str) -> str:
    """Joda/SimpleDateFormat patterns to Spark's: zone `Z` becomes `XX` (which also parses `Z`)."""
    return re.sub(r"(?<!')Z+", lambda m: "XXX" if len(m.group()) == 2 else "XX", pattern)


def _has_zone(pattern: str) -> bool:
    unquoted = re.sub(r"'[^']*'", "", pattern)
    return bool(_ZONE_LETTERS.search(unquoted))


def epoch_micros(column: Column, data_type: T.DataType, options: TimestampOptions) -> Column:
    """Epoch microseconds (UTC) of the partition field under the configured timestamp type."""
    if isinstance(data_type, T.TimestampNTZType):
        return _ntz_micros(column, options.input_timezone)
    if isinstance(data_type, T.TimestampType):
        return F.unix_micros(column)
    if isinstance(data_type, T.DateType):
        return _ntz_micros(column.cast(T.TimestampNTZType()), options.input_timezone)
    kind = options.timestamp_type
    if kind == "UNIX_TIMESTAMP":
        return column.cast("long") * 1_000_000
    if kind == "EPOCHMILLISECONDS":
        return column.cast("long") * 1_000
    if kind == "EPOCHMICROSECONDS":
        return column.cast("long")
    if kind == "SCALAR":
        return (column.cast("double") * _UNIT_MICROS[options.scalar_unit]).cast("long")
    if kind in ("DATE_STRING", "MIXED"):
        return _parse_date_string(column.cast("string"), options)
    raise ConfigError(f"unsupported timestamp type {kind}")


def _ntz_micros(ntz: Column, zone: str) -> Column:
    """Epoch micros of a wall-clock TIMESTAMP_NTZ read in `zone`."""
    utc_wall = F.convert_timezone(F.lit(zone), F.lit("UTC"), ntz)
    return F.timestamp_diff("MICROSECOND", F.expr(_EPOCH_NTZ), utc_wall)


def _parse_date_string(text: Column, options: TimestampOptions) -> Column:
    candidates = []
    for java_pattern in options.input_formats:
        pattern = java_to_spark_pattern(java_pattern)
        parsed = F.try_to_timestamp(text, F.lit(pattern))
        if _has_zone(pattern):
            candidates.append(F.unix_micros(parsed))
        else:
            # Without a zone in the text, the wall clock is in the input time zone. The cast back to
            # TIMESTAMP_NTZ undoes the session zone that try_to_timestamp applied.
            candidates.append(
                _ntz_micros(parsed.cast(T.TimestampNTZType()), options.input_timezone)
            )
    return candidates[0] if len(candidates) == 1 else F.coalesce(*candidates)


def timestamp_partition_value(
    column: Column, data_type: T.DataType, options: TimestampOptions
) -> Column:
    micros = epoch_micros(column, data_type, options)
    # The epoch plus an interval of `micros` (exact: decimal seconds with six digits), where
    # pyspark 4 has `timestamp_add` and 3.5 has not.
    seconds = (micros.cast(T.DecimalType(20, 0)) / 1_000_000).cast(T.DecimalType(18, 6))
    utc_wall = F.expr(_EPOCH_NTZ) + F.make_dt_interval(secs=seconds)
    local_wall = F.convert_timezone(F.lit("UTC"), F.lit(options.output_timezone), utc_wall)
    return F.date_format(local_wall, java_to_spark_pattern(options.output_format))
