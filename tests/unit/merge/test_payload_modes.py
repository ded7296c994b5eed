"""`pyhudi.merge.config`: Hudi payload class names mapped to merge modes."""

from __future__ import annotations

import pytest

from pyhudi.config import merge as mkeys
from pyhudi.exceptions import ConfigError
from pyhudi.merge.config import (
    DEFAULT_PAYLOAD,
    EVENT_TIME_PAYLOAD,
    OVERWRITE_WITH_LATEST,
    MergeMode,
    merge_mode_of,
    resolve_merge_config,
)
from pyhudi.table.context import TableContext


@pytest.mark.parametrize(
    ("payload_class", "mode"),
    [
        (
            "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
            MergeMode.COMMIT_TIME_ORDERING,
        ),
        ("org.apache.hudi.common.model.DefaultHoodieRecordPayload", MergeMode.EVENT_TIME_ORDERING),
        ("org.apache.hudi.common.model.EventTimeAvroPayload", MergeMode.EVENT_TIME_ORDERING),
        ("org.apache.hudi.common.model.PartialUpdateAvroPayload", MergeMode.PARTIAL_UPDATE),
        (
            "  org.apache.hudi.common.model.DefaultHoodieRecordPayload  ",
            MergeMode.EVENT_TIME_ORDERING,
        ),
    ],
)
def test_merge_mode_of_hudi_payload_classes(payload_class, mode):
    assert merge_mode_of(payload_class) is mode


def test_payload_constants_are_the_hudi_class_names():
    assert OVERWRITE_WITH_LATEST.endswith(".OverwriteWithLatestAvroPayload")
    assert DEFAULT_PAYLOAD.endswith(".DefaultHoodieRecordPayload")
    assert EVENT_TIME_PAYLOAD.endswith(".EventTimeAvroPayload")


@pytest.mark.parametrize(
    "payload_class",
    [
        "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload",
        "com.acme.MyPayload",
        "OverwriteWithLatestAvroPayload",
        "",
    ],
)
def test_unknown_payload_class_is_a_config_error_naming_it_and_the_supported_ones(payload_class):
    with pytest.raises(ConfigError) as caught:
        merge_mode_of(payload_class)
    assert repr(payload_class) in str(caught.value)
    assert DEFAULT_PAYLOAD in str(caught.value)


def test_merge_modes_are_hudi_1x_wire_names_but_the_version_6_payload_merge():
    assert {m.value for m in MergeMode} - {"PARTIAL_UPDATE"} == {
        "COMMIT_TIME_ORDERING",
        "EVENT_TIME_ORDERING",
    }
    assert "PARTIAL_UPDATE" not in mkeys.RECORD_MERGE_MODE.choices  # never a declared mode


def test_every_real_table_resolves_to_the_merge_mode_it_declares(hudi_tables):
    for name, root in hudi_tables.items():
        config = TableContext.open(str(root)).config
        mode = resolve_merge_config(config, str(root)).mode
        declared = config.get("hoodie.record.merge.mode")
        if declared is not None:  # table versions 8 and 9 record the mode as well
            assert mode.value == declared, name
        elif config.version == 6:  # v6: the payload class decides
            assert mode is merge_mode_of(config.payload_class), name
