"""How records merge: the merge modes, Hudi's payload classes mapped to them (one map), and a
table's merge mode and ordering fields resolved from `hoodie.properties` as Hudi 1.x resolves it.

| table version | merge mode from                                                                  |
|---------------|----------------------------------------------------------------------------------|
| 6             | the payload class (`hoodie.compaction.payload.class`; absent: Hudi 0.x's default `OverwriteWithLatestAvroPayload`) |
| 8             | the merge strategy id, else the payload class, else `hoodie.record.merge.mode`, else "ordering field set?" |
| 9             | `hoodie.record.merge.mode` (absent: inferred as for 8)                           |

Known payload classes map as in Hudi's `HoodieTableConfig.inferRecordMergeModeFromPayloadClass`:
`DefaultHoodieRecordPayload`, `EventTimeAvroPayload` -> EVENT_TIME_ORDERING,
`OverwriteWithLatestAvroPayload` -> COMMIT_TIME_ORDERING, any other class -> CUSTOM. On table
version 6, `PartialUpdateAvroPayload` -> PARTIAL_UPDATE (pyhudi's name for Hudi 0.15's payload merge:
`merge/partial.py`); Hudi 1.x infers CUSTOM for it on versions 8 and 9. CUSTOM merging, Hudi 1.x
partial update modes (`hoodie.table.partial.update.mode`, version 9) and migrated-payload merge
properties are not implemented: reading such a table is a `ConfigError` that names the property,
never a silent fallback to another merge mode.
EVENT_TIME_ORDERING without any ordering field orders by commit time, as Hudi does (with a warning).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum

from pyhudi.config import merge as mkeys
from pyhudi.config import table as tkeys
from pyhudi.exceptions import ConfigError
from pyhudi.table.config import TableConfig

log = logging.getLogger(__name__)


class MergeMode(str, Enum):
    """How an incoming record combines with the stored one."""

    #: `OverwriteWithLatestAvroPayload`: the later write wins regardless of ordering values (on
    #: table version 6 the log scan still pre-combines log versions by ordering value:
    #: `orders_log_versions`).
    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
    #: `DefaultHoodieRecordPayload` / `EventTimeAvroPayload`: the greater ordering value wins;
    #: a stale update (smaller ordering value) loses.
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
    #: `PartialUpdateAvroPayload` (table version 6 only): event-time ordering decides which
    #: version's values win, and a null field takes the other version's value
    #: (`pyhudi.merge.partial`). Not a Hudi 1.x merge mode: pyhudi's name for the payload's merge.
    PARTIAL_UPDATE = "PARTIAL_UPDATE"

    @property
    def orders_by_event_time(self) -> bool:
        """Whether ordering values decide between a stored record and a later version of it."""
        return self is not MergeMode.COMMIT_TIME_ORDERING

    def orders_log_versions(self, hudi_1x: bool) -> bool:
        """Whether ordering values decide between two log versions of a key (log records, and
        a log delete against a log record): on table version 6 under every mode, since Hudi
        0.15's log scan combines them with the payload's `preCombine`, which compares ordering
        values for `OverwriteWithLatestAvroPayload` too; on versions 8 and 9 (`hudi_1x`) under
        all but COMMIT_TIME_ORDERING, whose Hudi 1.2 merger takes the later version."""
        return self.orders_by_event_time or not hudi_1x


OVERWRITE_WITH_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"
PARTIAL_UPDATE_PAYLOAD = "org.apache.hudi.common.model.PartialUpdateAvroPayload"

#: The merge mode of each payload class pyhudi implements (Hudi's
#: `HoodieTableConfig.inferRecordMergeModeFromPayloadClass`; any other class is CUSTOM).
PAYLOAD_MODES = {
    OVERWRITE_WITH_LATEST: MergeMode.COMMIT_TIME_ORDERING,
    DEFAULT_PAYLOAD: MergeMode.EVENT_TIME_ORDERING,
    EVENT_TIME_PAYLOAD: MergeMode.EVENT_TIME_ORDERING,
    PARTIAL_UPDATE_PAYLOAD: MergeMode.PARTIAL_UPDATE,
}
#: Payload classes whose merge only table version 6 has (Hudi 1.x infers CUSTOM for them).
VERSION_6_ONLY = frozenset({PARTIAL_UPDATE_PAYLOAD})
CUSTOM = "CUSTOM"
_STRATEGY_MODES = {
    mkeys.EVENT_TIME_STRATEGY_ID: MergeMode.EVENT_TIME_ORDERING.value,
    mkeys.COMMIT_TIME_STRATEGY_ID: MergeMode.COMMIT_TIME_ORDERING.value,
}


@dataclass(frozen=True)
class MergeConfig:
    """The merge mode and the ordering fields (compared as a tuple) of a table."""

    mode: MergeMode
    ordering_fields: tuple[str, ...] = ()

    @property
    def ordering_field(self) -> str | None:
        """The single ordering field, or None (several fields: see `ordering_fields`)."""
        return self.ordering_fields[0] if len(self.ordering_fields) == 1 else None


def merge_mode_of(payload_class: str) -> MergeMode:
    """The merge mode of a write's payload class; an unknown class is a `ConfigError`."""
    try:
        return PAYLOAD_MODES[payload_class.strip()]
    except KeyError:
        raise ConfigError(
            f"unknown payload class {payload_class!r}; pyhudi supports {', '.join(sorted(PAYLOAD_MODES))}"
        ) from None


def mode_of_payload(payload_class: str | None, version: int = 6) -> str | None:
    """A table's payload class as a merge mode value (CUSTOM for a class pyhudi does not know,
    and for a version-6-only payload on a table of version 8 or later)."""
    if not payload_class or not payload_class.strip():
        return None
    if version >= 8 and payload_class.strip() in VERSION_6_ONLY:
        return CUSTOM
    mode = PAYLOAD_MODES.get(payload_class.strip())
    return mode.value if mode else CUSTOM


def mode_of_strategy(strategy_id: str | None) -> str | None:
    if not strategy_id or not strategy_id.strip():
        return None
    return _STRATEGY_MODES.get(strategy_id.strip(), CUSTOM)


def resolve_merge_config(config: TableConfig, path: str = "") -> MergeConfig:
    """The table's merge semantics; a clear `ConfigError` for anything pyhudi does not implement."""
    _check_no_partial_updates(config, path)
    ordering = config.ordering_fields
    mode = _inferred_mode(config, ordering)
    if mode == CUSTOM:
        raise ConfigError(
            f"table {path} merges records with a custom merger ({mkeys.RECORD_MERGE_MODE.key}="
            f"CUSTOM, payload class {_payload_of(config)!r}, strategy id "
            f"{mkeys.RECORD_MERGE_STRATEGY_ID.get(config.props)!r}); pyhudi reads "
            "COMMIT_TIME_ORDERING and EVENT_TIME_ORDERING tables only (and "
            "PartialUpdateAvroPayload on table version 6)"
        )
    if mode == MergeMode.EVENT_TIME_ORDERING.value and not ordering:
        log.warning(
            "table %s: EVENT_TIME_ORDERING without ordering fields orders by commit time", path
        )
        return MergeConfig(MergeMode.COMMIT_TIME_ORDERING)
    return MergeConfig(MergeMode(mode), ordering)


def _inferred_mode(config: TableConfig, ordering: tuple[str, ...]) -> str:
    declared = mkeys.RECORD_MERGE_MODE.get(config.props)
    if config.version >= 9 and declared is not None:
        return declared
    by_payload = mode_of_payload(_payload_of(config), config.version)
    by_strategy = mode_of_strategy(mkeys.RECORD_MERGE_STRATEGY_ID.get(config.props))
    if config.version < 8:  # v6 persists no merge mode; 0.x strategy ids mean "the Avro merger"
        by_strategy = None
    if by_payload is None and by_strategy is None:
        inferred = declared or (
            MergeMode.EVENT_TIME_ORDERING.value
            if ordering
            else MergeMode.COMMIT_TIME_ORDERING.value
        )
    elif config.version >= 8:
        inferred = by_strategy or by_payload  # type: ignore[assignment]
    else:
        inferred = by_payload or by_strategy  # type: ignore[assignment]
    if declared is not None and declared != inferred:
        raise ConfigError(
            f"{mkeys.RECORD_MERGE_MODE.key}={declared} conflicts with the payload class "
            f"{_payload_of(config)!r} / strategy id {mkeys.RECORD_MERGE_STRATEGY_ID.get(config.props)!r}"
        )
    return inferred


def _payload_of(config: TableConfig) -> str | None:
    if tkeys.PAYLOAD_CLASS.is_set(config.props):
        return tkeys.PAYLOAD_CLASS.get(config.props)
    if config.version < 8:
        return tkeys.PAYLOAD_CLASS.default  # what Hudi 0.x wrote with when the table omits it
    return None


def _check_no_partial_updates(config: TableConfig, path: str) -> None:
    partial = mkeys.PARTIAL_UPDATE_MODE.get(config.props)
    if partial != "NONE":
        raise ConfigError(
            f"table {path} has {mkeys.PARTIAL_UPDATE_MODE.key}={partial}: Hudi 1.x partial update "
            "modes belong to table version 8 and later, whose merging pyhudi does not implement "
            "(reads would return wrong values); pyhudi writes table version 6, where "
            f"{PARTIAL_UPDATE_PAYLOAD} gives partial updates"
        )
    extra = sorted(k for k in config.props if k.startswith(mkeys.RECORD_MERGE_PROPERTY_PREFIX))
    if extra:
        raise ConfigError(
            f"table {path} sets merge properties pyhudi does not implement: {', '.join(extra)}"
        )
