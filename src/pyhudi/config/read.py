"""Read options (`DataSourceReadOptions`)."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, integer, string

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
    "Incremental rows: the latest state of changed records, or `cdc`: each change (op, ts_ms, "
    "before, after), docs/cdc.md.",
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
READ_PATHS = string(
    "hoodie.datasource.read.paths",
    None,
    "Comma-separated paths inside the table to read (folders, files, globs): only the file "
    "slices they name (not with incremental queries).",
)
DATA_SKIPPING = boolean(
    "hoodie.enable.data.skipping",
    False,
    "Skip file slices whose column stats (metadata table) prove no row matches the read's filters.",
)

# ---- streaming reads (`spark.readStream.format("hudi")`, `pyhudi.spark.stream_source`) ---------
STREAMING_START_OFFSET = string(
    "hoodie.datasource.streaming.startOffset",
    "earliest",
    "Streaming reads: where a new stream (no checkpoint yet) starts: `earliest` (every commit of "
    "the active timeline), `latest` (only commits that complete after it starts), or an instant "
    "time: the commits after it (a completion time at table versions 8 and 9).",
    "hoodie.datasource.streaming.startoffset",  # Spark lower-cases data source option keys
)
STREAMING_MAX_COMMITS = integer(
    "hoodie.datasource.streaming.max.commits.per.batch",
    None,
    "Streaming reads: at most this many commits per micro-batch (default: all available). "
    "pyhudi's key: Hudi's Spark streaming source has no rate limit. `availableNow` triggers "
    "honour it, `once` triggers read everything.",
)
INCR_SKIP_COMPACT = boolean(
    "hoodie.datasource.read.incr.skip_compact",
    False,
    "Streaming reads of merge-on-read tables: compaction commits are not read (they rewrite "
    "records, keeping their commit times) and do not count toward the commit limit. Batch "
    "incremental reads select records by commit time, so compactions add none either way.",
)
INCR_SKIP_CLUSTER = boolean(
    "hoodie.datasource.read.incr.skip_cluster",
    False,
    "Streaming reads: clustering commits are not read and do not count toward the commit limit. "
    "Batch incremental reads select records by commit time, so clustering adds none either way.",
)
HOLLOW_COMMIT_POLICY = choice(
    "hoodie.read.timeline.holes.resolution.policy",
    None,
    ("FAIL", "BLOCK", "USE_TRANSITION_TIME"),
    "Incremental reads and streams of table version 6, when a commit is still pending while "
    "later ones completed (a hollow commit): FAIL (batch reads' default, as Hudi 0.15) refuses "
    "the read; BLOCK (streams' default) reads nothing from it on until it completes or is rolled "
    "back. USE_TRANSITION_TIME is not supported. Versions 8 and 9 order commits by completion "
    "time, where no such hole exists.",
)
