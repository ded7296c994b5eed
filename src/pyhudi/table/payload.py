"""Record payloads (how two versions of one key merge), mapped from Hudi class names to built-ins."""

from __future__ import annotations

from enum import Enum

from pyhudi.exceptions import ConfigError


class MergeMode(str, Enum):
    """How an incoming record combines with the stored one."""

    #: `OverwriteWithLatestAvroPayload`: the later write wins regardless of ordering values.
    COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
    #: `DefaultHoodieRecordPayload` / `EventTimeAvroPayload`: the greater ordering value wins;
    #: a stale update (smaller ordering value) loses.
    EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"


OVERWRITE_WITH_LATEST = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"

_MODES = {
    OVERWRITE_WITH_LATEST: MergeMode.COMMIT_TIME_ORDERING,
    DEFAULT_PAYLOAD: MergeMode.EVENT_TIME_ORDERING,
    EVENT_TIME_PAYLOAD: MergeMode.EVENT_TIME_ORDERING,
}


def merge_mode_of(payload_class: str) -> MergeMode:
    try:
        return _MODES[payload_class.strip()]
    except KeyError:
        raise ConfigError(
            f"unknown payload class {payload_class!r}; pyhudi supports {', '.join(sorted(_MODES))}"
        ) from None
