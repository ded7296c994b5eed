"""Bootstrap mode selection: which source partitions are METADATA_ONLY and which FULL_RECORD.

`MetadataOnlyBootstrapModeSelector` (default) and `FullRecordBootstrapModeSelector` give every
partition one mode; `BootstrapRegexModeSelector` gives partitions whose path fully matches
`hoodie.bootstrap.mode.selector.regex` the mode `hoodie.bootstrap.mode.selector.regex.mode` and all
others the other mode. Matching is against the source partition path exactly as it is on storage:
with `2022/10/0[0-9]` and folders `2022-10-08`, nothing matches (the separator differs) and every
partition gets the other mode, as the seed article found out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pyhudi.config import bootstrap as bootstrap_keys
from pyhudi.exceptions import ConfigError
from pyhudi.model.enums import BootstrapMode

_UNIFORM = {
    "MetadataOnlyBootstrapModeSelector": BootstrapMode.METADATA_ONLY,
    "FullRecordBootstrapModeSelector": BootstrapMode.FULL_RECORD,
}


def select_modes(partitions: Sequence[str], options: Mapping[str, str]) -> dict[str, BootstrapMode]:
    """Every partition exactly once, with its mode."""
    selector = (bootstrap_keys.MODE_SELECTOR.get(options) or "").strip().rsplit(".", 1)[-1]
    if selector in _UNIFORM:
        return {p: _UNIFORM[selector] for p in partitions}
    if selector != "BootstrapRegexModeSelector":
        raise ConfigError(
            f"unknown {bootstrap_keys.MODE_SELECTOR.key} {selector!r}; use MetadataOnlyBootstrapModeSelector, "
            "FullRecordBootstrapModeSelector or BootstrapRegexModeSelector"
        )
    try:
        pattern = re.compile(bootstrap_keys.MODE_SELECTOR_REGEX.get(options) or ".*")
    except re.error as err:
        raise ConfigError(f"invalid {bootstrap_keys.MODE_SELECTOR_REGEX.key}: {err}") from err
    on_match = BootstrapMode(bootstrap_keys.MODE_SELECTOR_REGEX_MODE.get(options))
    return {p: on_match if pattern.fullmatch(p) else on_match.other for p in partitions}
