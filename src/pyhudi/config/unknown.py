"""Option keys and values pyhudi does not implement: never ignored silently (writes, reads and
table services alike).

* a key that is not declared but reads as a misspelling of a declared one (`typos.py`), inside or
  outside `hoodie.*`, is a `ConfigError` naming the key it probably meant; with
  `pyhudi.options.strict=false` it is a warning instead (for option dicts shared with other tools);
* a key whose absence of effect could change results or safety (merge modes and mergers, custom
  classes, schema-on-read, ...) is a `ConfigError`, and so is a declared key given a value pyhudi
  cannot honour (`unsupported.py`: CDC, table versions other than 6, ...);
* any other `hoodie.*` / `pyhudi.*` key pyhudi does not declare gets one warning listing them all
  ("not used by pyhudi"), as do harmless values pyhudi cannot honour;
* a small allow-list of Hudi keys that only tune Hudi's own JVM machinery passes silently.

Other keys (Spark's `path`, `mergeSchema`, `checkpointLocation`, `spark.*`, ...) are not Hudi's: they
are left alone unless they read as a misspelling of a Hudi or pyhudi key (`hoodi.datasource...`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from functools import cache
from importlib import resources

from pyhudi.config import merge as merge_keys
from pyhudi.config import sql as sql_keys
from pyhudi.config import write as write_keys
from pyhudi.config.options import REGISTRY, boolean
from pyhudi.config.typos import probable_key
from pyhudi.config.unsupported import Scope, refused_values
from pyhudi.exceptions import ConfigError

STRICT = boolean(
    "pyhudi.options.strict",
    True,
    "Misspelt option keys (close to a Hudi or pyhudi key) are errors; false: warnings.",
)
#: Prefixes of the keys pyhudi owns (unknown ones get a warning, misspelt ones an error).
OWN_PREFIXES = ("hoodie.", "pyhudi.")
#: Keys pyhudi accepts besides the registry: Spark's data source path, the properties Spark adds to
#: catalog tables, Hudi's Spark SQL table property names (as given and as Spark lower-cases them),
#: and the key streaming writes add to each micro-batch's options.
ACCEPTED_KEYS = frozenset(
    {
        "path",
        write_keys.SERVICES_ASYNC_CONTEXT,
        *sql_keys.CATALOG_KEYS,
        *sql_keys.SQL_PROPERTY_KEYS,
        *(k.lower() for k in sql_keys.SQL_PROPERTY_KEYS),
    }
)

#: Undeclared keys that change what is written or how records merge: an error when given
#: (declared keys with values pyhudi cannot honour are `unsupported.RULES`).
CORRECTNESS_KEYS = frozenset(
    {
        "hoodie.record.merge.strategy.id",
        "hoodie.datasource.write.record.merger.impls",
        "hoodie.datasource.write.record.merger.strategy",
        "hoodie.write.record.merge.custom.implementation.classes",
        "hoodie.datasource.write.payload.type",
        "hoodie.schema.on.read.enable",
        "hoodie.datasource.write.schema.allow.auto.evolution.column.drop",
        "hoodie.datasource.write.new.columns.nullable",
        "hoodie.bucket.index.max.num.buckets",
        "hoodie.bucket.index.min.num.buckets",
        "hoodie.write.concurrency.early.conflict.detection.enable",
        "hoodie.datasource.write.streaming.ignore.failed.batch",
        "hoodie.allow.empty.commit",
        "hoodie.avro.schema.external.transformation",
        # hudi-aws: AWS calls as another role (pyhudi uses the given keys or boto3's chain).
        "hoodie.aws.role.arn",
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
#: Hudi 1.x table properties pyhudi declares to READ v8/v9 tables (`config/merge.py`) but does
#: not take from a write: on a write they count as not implemented. (A write takes the merge mode,
#: `hoodie.record.merge.mode`, and the ordering fields: `writer/config.py` checks them.)
READ_ONLY_KEYS = frozenset(
    option.key
    for option in (
        merge_keys.RECORD_MERGE_STRATEGY_ID,
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


@cache
def hudi_keys() -> frozenset[str]:
    """Every option key Apache Hudi 0.15 and 1.2 declare (`hudi_keys.txt`)."""
    text = resources.files("pyhudi.config").joinpath("hudi_keys.txt").read_text()
    return frozenset(line for line in text.split() if line.startswith("hoodie."))


def _is_known(key: str) -> bool:
    """Declared, accepted, or one of Hudi's own keys (never a misspelling)."""
    return (
        key in REGISTRY
        or key in hudi_keys()
        or key in ACCEPTED_KEYS
        or key in CORRECTNESS_KEYS
        or key in HARMLESS_KEYS
        or key.startswith(CORRECTNESS_PREFIXES)
        or key.startswith(HARMLESS_PREFIXES)
    )


def _candidates() -> list[str]:
    """The keys a misspelt one is matched against: Hudi's and pyhudi's, never Spark's."""
    return sorted({*REGISTRY, *CORRECTNESS_KEYS, *HARMLESS_KEYS})


def misspelt_keys(options: Mapping[str, str]) -> dict[str, str]:
    """Given key -> the declared key it probably misspells, for the keys that are not known."""
    candidates = _candidates()
    found = {}
    for key in options:
        if _is_known(key):
            continue
        meant = probable_key(key, candidates)
        if meant is not None:
            found[key] = meant
    return found


def unknown_keys(options: Mapping[str, str]) -> list[str]:
    """The `hoodie.*` / `pyhudi.*` keys pyhudi does not implement (write-side: Hudi 1.x table
    properties pyhudi only reads count as not implemented)."""
    return sorted(
        k
        for k in options
        if k.startswith(OWN_PREFIXES)
        and (k not in REGISTRY or k in READ_ONLY_KEYS)
        and k not in ACCEPTED_KEYS
        and k not in HARMLESS_KEYS
        and not k.startswith(HARMLESS_PREFIXES)
    )


def check_options(options: Mapping[str, str], scope: Scope) -> None:
    """Raise for misspelt keys, keys and values whose absence of effect could change results;
    warn once about the other keys and values pyhudi does not use."""
    strict = STRICT.get(options)
    misspelt = misspelt_keys(options)
    hints = [f"{k!r} (did you mean {meant!r}?)" for k, meant in sorted(misspelt.items())]
    if hints and strict:
        raise ConfigError(
            "unknown option key " + ", ".join(hints) + f"; set {STRICT.key}=false to only warn"
        )
    unknown = [
        k for k in unknown_keys(_without_extra_metadata(options, scope)) if k not in misspelt
    ]
    fatal = [k for k in unknown if _is_correctness_key(k, str(options[k]))]
    refused, harmless = refused_values(options, scope)
    if fatal or refused:
        listed = ", ".join(f"{k}={options[k]!r}" for k in fatal)
        parts = ([f"pyhudi does not implement {listed}"] if fatal else []) + refused
        raise ConfigError(
            "; ".join(parts) + f"; ignoring this could change the {scope.value}'s results "
            "(remove the option, or use Apache Hudi)"
        )
    notes = [f"probably misspelt (not used): {', '.join(hints)}"] if hints else []
    if unknown:
        notes.append("not used by pyhudi: " + ", ".join(unknown))
    notes.extend(harmless)
    if notes:
        warnings.warn("; ".join(notes), UserWarning, stacklevel=3)


def _without_extra_metadata(options: Mapping[str, str], scope: Scope) -> Mapping[str, str]:
    """A write's options without those its commit-metadata prefix sends to extraMetadata."""
    if scope is not Scope.WRITE:
        return options
    prefix = write_keys.COMMIT_METADATA_KEYPREFIX.get(options)
    return {k: v for k, v in options.items() if not (prefix and k.startswith(prefix))}


def check_write_options(options: Mapping[str, str]) -> None:
    check_options(options, Scope.WRITE)


def check_read_options(options: Mapping[str, str] | None) -> None:
    check_options(options or {}, Scope.READ)


def check_service_options(options: Mapping[str, str] | None) -> None:
    check_options(options or {}, Scope.SERVICE)
