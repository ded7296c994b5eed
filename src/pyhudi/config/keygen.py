"""Key generator options (`KeyGeneratorOptions`, `TimestampBasedAvroKeyGenerator.Config`)."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, string

TIMESTAMP_TYPE = choice(
    "hoodie.keygen.timebased.timestamp.type",
    None,
    ("UNIX_TIMESTAMP", "DATE_STRING", "MIXED", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR"),
    "How the TimestampBased key generator reads the partition field.",
)
SCALAR_TIME_UNIT = choice(
    "hoodie.keygen.timebased.timestamp.scalar.time.unit",
    "SECONDS",
    ("NANOSECONDS", "MICROSECONDS", "MILLISECONDS", "SECONDS", "MINUTES", "HOURS", "DAYS"),
    "Unit of SCALAR timestamps.",
)
INPUT_DATE_FORMAT = string(
    "hoodie.keygen.timebased.input.dateformat", "", "Input date format(s) of DATE_STRING values."
)
INPUT_DATE_FORMAT_DELIMITER = string(
    "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex",
    ",",
    "Separator of several input formats.",
)
OUTPUT_DATE_FORMAT = string(
    "hoodie.keygen.timebased.output.dateformat", "", "Partition path format (Java date pattern)."
)
TIMEZONE = string("hoodie.keygen.timebased.timezone", "UTC", "Time zone of input and output.")
INPUT_TIMEZONE = string(
    "hoodie.keygen.timebased.input.timezone", "", "Time zone of DATE_STRING input."
)
OUTPUT_TIMEZONE = string(
    "hoodie.keygen.timebased.output.timezone", "", "Time zone of the partition path."
)
CONSISTENT_LOGICAL_TIMESTAMP = boolean(
    "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled",
    False,
    "Render logical timestamps in keys as Avro does.",
)

#: Keys Hudi persists into hoodie.properties when the TimestampBased generator is used.
PERSISTED = (
    TIMESTAMP_TYPE,
    SCALAR_TIME_UNIT,
    INPUT_DATE_FORMAT,
    INPUT_DATE_FORMAT_DELIMITER,
    OUTPUT_DATE_FORMAT,
    TIMEZONE,
    INPUT_TIMEZONE,
    OUTPUT_TIMEZONE,
)
