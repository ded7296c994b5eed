"""Avro name sanitizing of incoming column names (Hudi's streamer source options, same keys)."""

from __future__ import annotations

from pyhudi.config.options import boolean, string

SANITIZE_FIELD_NAMES = boolean(
    "hoodie.streamer.source.sanitize.invalid.schema.field.names",
    False,
    "Replace characters of column names that Avro does not allow (anything but A-Z, a-z, 0-9 "
    "and _, or a digit first) with hoodie.streamer.source.sanitize.invalid.char.mask instead of "
    "rejecting the write. Nested field names too. Key, partition and precombine fields name the "
    "sanitized columns.",
    "hoodie.deltastreamer.source.sanitize.invalid.schema.field.names",
)
INVALID_CHAR_MASK = string(
    "hoodie.streamer.source.sanitize.invalid.char.mask",
    "__",
    "What replaces each invalid character of a column name when sanitizing is on.",
    "hoodie.deltastreamer.source.sanitize.invalid.char.mask",
)
