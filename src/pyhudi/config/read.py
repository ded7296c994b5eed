"""Read options (`DataSourceReadOptions`)."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, string

QUERY_TYPE = choice(
    "hoodie.datasource.query.type",
    "snapshot",
    ("snapshot", "read_optimized", "incremental"),
    "What the read returns.",
    upper=False,
)
INCREMENTAL_FORMAT = choice(
    "hoodie.datasource.query.incremental.format",
    "latest_state",
    ("latest_state", "cdc"),
    "Incremental rows: the latest state of changed records; `cdc` (change data capture) is not "
    "supported (a ConfigError).",
    upper=False,
)
AS_OF_INSTANT = string(
    "as.of.instant",
    None,
    "Time travel: the table as of this instant (yyyyMMddHHmmssSSS or a date-time).",
)
BEGIN_INSTANT = string(
    "hoodie.datasource.read.begin.instanttime",
    None,
    "Incremental: commits after this instant (exclusive).",
)
END_INSTANT = string(
    "hoodie.datasource.read.end.instanttime",
    None,
    "Incremental: commits up to this instant (inclusive).",
)
MERGE_TYPE = choice(
    "hoodie.datasource.merge.type",
    "payload_combine",
    ("payload_combine", "skip_merge"),
    "MOR snapshot: merge logs into base records, or just concatenate.",
    upper=False,
)
INCR_FALLBACK_FULL_SCAN = boolean(
    "hoodie.datasource.read.incr.fallback.fulltablescan.enable",
    False,
    "Incremental reads of cleaned or archived commits fall back to a full scan.",
)
READ_PATHS = string("hoodie.datasource.read.paths", None, "Not supported: read whole tables.")
DATA_SKIPPING = boolean(
    "hoodie.enable.data.skipping",
    False,
    "Skip file slices whose column stats (metadata table) prove no row matches the read's filters.",
)
