"""Option keys pyhudi does not implement: never ignored silently (write side).

* a key whose absence of effect could change results or safety (merge modes and mergers, custom
  classes, schema-on-read, CDC, ...) is a `ConfigError`;
* any other `hoodie.*` key pyhudi does not declare gets one warning per write listing them all;
* a small allow-list of Hudi keys that only tune Hudi's own JVM machinery passes silently.

Keys outside `hoodie.*` (Spark's, `path`, pyhudi's own `pyhudi.*`) are not checked here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from pyhudi.config import merge as merge_keys
from pyhudi.config.options import REGISTRY
from pyhudi.exceptions import ConfigError

#: Keys that change what is written or how records merge: an error when given.
CORRECTNESS_KEYS = frozenset(
    {
        "hoodie.record.merge.mode",
        "hoodie.record.merge.strategy.id",
        "hoodie.datasource.write.record.merger.impls",
        "hoodie.datasource.write.record.merger.strategy",
        "hoodie.write.record.merge.custom.implementation.classes",
        "hoodie.datasource.write.payload.type",
        "hoodie.schema.on.read.enable",
        "hoodie.datasource.write.schema.allow.auto.evolution.column.drop",
        "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled",
        "hoodie.table.cdc.enabled",
        "hoodie.datasource.write.new.columns.nullable",
        "hoodie.index.bucket.engine",
        "hoodie.bucket.index.max.num.buckets",
        "hoodie.bucket.index.min.num.buckets",
        "hoodie.write.concurrency.early.conflict.detection.enable",
        "hoodie.datasource.write.streaming.ignore.failed.batch",
        "hoodie.allow.empty.commit",
        "hoodie.avro.schema.external.transformation",
    }
)
#: Prefixes of families of keys that change results.
CORRECTNESS_PREFIXES = ("hoodie.record.merge.", "hoodie.index.hbase.", "hoodie.payload.")
#: Hudi tuning keys of JVM machinery pyhudi does not have; harmless, accepted silently.
HARMLESS_KEYS = frozenset(
    {
        "hoodie.embed.timeline.server",
        "hoodie.embed.timeline.server.reuse.enabled",
        "hoodie.consistency.check.enabled",
        "hoodie.write.markers.timeline_server_based.batch.interval_ms",
        "hoodie.fail.on.timeline.archiving",
        "hoodie.write.buffer.limit.bytes",
        "hoodie.memory.merge.max.size",
        "hoodie.memory.spillable.map.path",
        "hoodie.datasource.write.streaming.retry.count",
        "hoodie.datasource.write.streaming.retry.interval.ms",
    }
)
HARMLESS_PREFIXES = ("hoodie.filesystem.view.", "hoodie.write.lock.zookeeper.")
#: Hudi 1.x table properties pyhudi declares to READ v8/v9 tables (`config/merge.py`) but never
#: writes (it writes table version 6): on a write they count as not implemented.
READ_ONLY_KEYS = frozenset(
    option.key
    for option in (
        merge_keys.RECORD_MERGE_MODE,
        merge_keys.RECORD_MERGE_STRATEGY_ID,
        merge_keys.ORDERING_FIELDS,
        merge_keys.LEGACY_PAYLOAD_CLASS,
        merge_keys.PARTIAL_UPDATE_MODE,
        merge_keys.KEY_GENERATOR_TYPE,
    )
)


def _is_correctness_key(key: str, value: str) -> bool:
    if key in CORRECTNESS_KEYS or key.startswith(CORRECTNESS_PREFIXES):
        return not (key.endswith(".enable") or key.endswith(".enabled")) or _truthy(value)
    # A class pyhudi does not know would be code; table config is data (DESIGN.md).
    return key.endswith(".class") or key.endswith(".classes")


def _truthy(value: str) -> bool:
    return value.strip().lower() not in ("false", "0", "")


def unknown_keys(options: Mapping[str, str]) -> list[str]:
    return sorted(
        k
        for k in options
        if k.startswith("hoodie.")
        and (k not in REGISTRY or k in READ_ONLY_KEYS)
        and k not in HARMLESS_KEYS
        and not k.startswith(HARMLESS_PREFIXES)
    )


def check_write_options(options: Mapping[str, str]) -> None:
    """Raise for unknown keys that could change results; warn once about the other unknown ones."""
    unknown = unknown_keys(options)
    fatal = [k for k in unknown if _is_correctness_key(k, str(options[k]))]
    if fatal:
        listed = ", ".join(f"{k}={options[k]!r}" for k in fatal)
        raise ConfigError(
            f"pyhudi does not implement {listed}; ignoring it could change what is written "
            "(remove the option, or write with Apache Hudi)"
        )
    if unknown:
        message = (
            "pyhudi ignores these options it does not implement (they do not change the data "
            "written): " + ", ".join(unknown)
        )
        warnings.warn(message, UserWarning, stacklevel=3)
