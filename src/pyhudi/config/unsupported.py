"""Declared keys with values pyhudi cannot honour: never accepted silently.

A key being declared (in the registry) does not mean every value of it works: pyhudi writes table
versions 6, 8 and 9 only, always keeps commit times when it compacts or clusters, ... Each rule
names one option, the values pyhudi honours, and what pyhudi does instead.
A value that would change results or safety is a `ConfigError`; a harmless one is a warning.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pyhudi.config import clustering as clustering_keys
from pyhudi.config import compaction as compaction_keys
from pyhudi.config import index as index_keys
from pyhudi.config import keygen as keygen_keys
from pyhudi.config import merge as merge_keys
from pyhudi.config import sync as sync_keys
from pyhudi.config import table as table_keys
from pyhudi.config import write as write_keys
from pyhudi.config.options import ConfigOption


class Scope(str, Enum):
    """What the options are given to: a write, a read, or a table service."""

    WRITE = "write"
    READ = "read"
    SERVICE = "service"


_WRITING = frozenset({Scope.WRITE, Scope.SERVICE})


@dataclass(frozen=True)
class ValueRule:
    option: ConfigOption[Any]
    honoured: Callable[[Any], bool]
    #: What pyhudi does instead (completes "pyhudi cannot honour KEY=VALUE: ...").
    reason: str
    fatal: bool
    scopes: frozenset[Scope] = _WRITING


def _default(option: ConfigOption[Any]) -> Callable[[Any], bool]:
    return lambda value: bool(value == option.default)


def _known_sync_tools(tools: tuple[str, ...]) -> bool:
    return {t.strip() for t in tools if t.strip()} <= sync_keys.SYNC_TOOLS


def _glue_needs_boto3(tools: tuple[str, ...]) -> bool:
    """A Glue sync without boto3 would fail after the commit: say so before writing."""
    if not {t.strip() for t in tools} & sync_keys.GLUE_SYNC_TOOLS:
        return True
    return importlib.util.find_spec("boto3") is not None


_VERSIONS = write_keys.WRITABLE_TABLE_VERSIONS
_VERSION = f"pyhudi writes table versions {', '.join(map(str, _VERSIONS))}"

RULES: tuple[ValueRule, ...] = (
    ValueRule(write_keys.WRITE_TABLE_VERSION, lambda v: v in _VERSIONS, _VERSION, fatal=True),
    ValueRule(table_keys.VERSION, lambda v: v in _VERSIONS, _VERSION, fatal=True),
    ValueRule(
        merge_keys.PARTIAL_UPDATE_MODE,
        lambda v: v == "NONE",
        "pyhudi does not write Hudi 1.x's partial update modes (table version 8+); "
        "on table version 6, for partial updates set hoodie.datasource.write.payload.class="
        "org.apache.hudi.common.model.PartialUpdateAvroPayload",
        fatal=True,
    ),
    ValueRule(
        table_keys.TIMELINE_LAYOUT_VERSION,
        lambda v: v in (1, 2),
        "pyhudi writes timeline layouts 1 (table version 6) and 2 (versions 8 and 9)",
        fatal=True,
    ),
    ValueRule(
        table_keys.BASE_FILE_FORMAT,
        lambda v: v == "PARQUET",
        "pyhudi writes parquet base files",
        fatal=True,
    ),
    ValueRule(
        table_keys.TABLE_FORMAT,
        lambda v: v.strip().lower() == "native",
        "pyhudi writes the native Hudi table format",
        fatal=True,
    ),
    ValueRule(
        keygen_keys.CONSISTENT_LOGICAL_TIMESTAMP,
        lambda v: not v,
        "pyhudi does not implement it (keys of logical timestamps keep Hudi's default rendering)",
        fatal=True,
    ),
    ValueRule(
        index_keys.BUCKET_ENGINE,
        lambda v: v == "SIMPLE",
        "pyhudi implements the SIMPLE bucket index engine only",
        fatal=True,
    ),
    ValueRule(
        compaction_keys.PRESERVE_COMMIT_METADATA,
        bool,
        "compacted records always keep their commit time (Hudi's default)",
        fatal=True,
    ),
    ValueRule(
        clustering_keys.PRESERVE_COMMIT_METADATA,
        bool,
        "clustered records always keep their commit time (Hudi's default)",
        fatal=True,
    ),
    ValueRule(
        sync_keys.CLIENT_TOOL_CLASS,
        _known_sync_tools,
        f"pyhudi implements the sync tools {', '.join(sorted(sync_keys.SYNC_TOOLS))}",
        fatal=True,
    ),
    ValueRule(
        sync_keys.CLIENT_TOOL_CLASS,
        _glue_needs_boto3,
        "the AWS Glue sync needs boto3: pip install 'pyhudi[glue]'",
        fatal=True,
    ),
    # Harmless: the data written and read are the same either way.
    ValueRule(
        write_keys.ROLLBACK_USING_MARKERS,
        bool,
        "pyhudi always rolls failed writes back from their markers",
        fatal=False,
    ),
    ValueRule(
        write_keys.MARKERS_TYPE,
        lambda v: v == "DIRECT",
        "pyhudi writes direct markers",
        fatal=False,
    ),
    ValueRule(
        write_keys.LOG_FILE_MAX_SIZE,
        _default(write_keys.LOG_FILE_MAX_SIZE),
        "not used: pyhudi writes a new log file version per write",
        fatal=False,
    ),
    ValueRule(
        write_keys.PARQUET_COMPRESSION_RATIO,
        _default(write_keys.PARQUET_COMPRESSION_RATIO),
        "not used by pyhudi's file sizing",
        fatal=False,
    ),
    ValueRule(
        write_keys.STREAMING_BATCH_ID_KEY,
        _default(write_keys.STREAMING_BATCH_ID_KEY),
        "not used: pyhudi's streaming writes record the micro-batch id under their own key",
        fatal=False,
    ),
    ValueRule(
        table_keys.PARTITION_METAFILE_USE_BASE_FORMAT,
        lambda v: not v,
        "pyhudi writes partition metafiles as text",
        fatal=False,
    ),
    ValueRule(
        table_keys.ARCHIVELOG_FOLDER,
        _default(table_keys.ARCHIVELOG_FOLDER),
        "tables pyhudi creates archive into .hoodie/archived",
        fatal=False,
    ),
)

#: Table properties that only name the fields the write options set: given alone on a write they
#: would be ignored (a table keyed or partitioned otherwise), so they need the write option too.
TABLE_PROPERTY_FIELDS: tuple[tuple[ConfigOption[Any], ConfigOption[Any]], ...] = (
    (table_keys.PARTITION_FIELDS, write_keys.PARTITION_PATH_FIELD),
    (table_keys.RECORD_KEY_FIELDS, write_keys.RECORD_KEY_FIELD),
)


def refused_values(options: Mapping[str, str], scope: Scope) -> tuple[list[str], list[str]]:
    """(errors, warnings): one sentence per given value pyhudi cannot honour in `scope`."""
    errors: list[str] = []
    warnings: list[str] = []
    for rule in RULES:
        if scope not in rule.scopes or not rule.option.is_set(options):
            continue
        if rule.honoured(rule.option.get(options)):
            continue
        given = f"{rule.option.key}={rule.option.raw(options)!r}"
        (errors if rule.fatal else warnings).append(f"{given}: {rule.reason}")
    if scope is Scope.WRITE:
        for table_option, write_option in TABLE_PROPERTY_FIELDS:
            if table_option.is_set(options) and not write_option.is_set(options):
                errors.append(
                    f"{table_option.key} is a table property pyhudi sets from "
                    f"{write_option.key}; give that option"
                )
    return errors, warnings
