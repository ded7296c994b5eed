"""`pyhudi.merge.config`: merge mode and ordering fields as Hudi 1.x infers them, per version."""

from __future__ import annotations

import pytest

from pyhudi.config import merge as mkeys
from pyhudi.exceptions import ConfigError
from pyhudi.merge.config import (
    DEFAULT_PAYLOAD,
    EVENT_TIME_PAYLOAD,
    OVERWRITE_WITH_LATEST,
    PARTIAL_UPDATE_PAYLOAD,
    MergeConfig,
    MergeMode,
    resolve_merge_config,
)
from pyhudi.table.config import TableConfig

EVENT, COMMIT = MergeMode.EVENT_TIME_ORDERING, MergeMode.COMMIT_TIME_ORDERING


def config(version: int, **props: str) -> TableConfig:
    return TableConfig({"hoodie.table.version": str(version), **props})


def resolve(version: int, **props: str) -> MergeConfig:
    return resolve_merge_config(config(version, **props), "/tables/t")


PAYLOAD = "hoodie.compaction.payload.class"
MODE = "hoodie.record.merge.mode"
STRATEGY = "hoodie.record.merge.strategy.id"
ORDERING = "hoodie.table.ordering.fields"
PRECOMBINE = "hoodie.table.precombine.field"


@pytest.mark.parametrize(
    ("payload", "mode"),
    [
        (DEFAULT_PAYLOAD, EVENT),
        (EVENT_TIME_PAYLOAD, EVENT),
        (OVERWRITE_WITH_LATEST, COMMIT),
        (PARTIAL_UPDATE_PAYLOAD, MergeMode.PARTIAL_UPDATE),
    ],
)
def test_v6_known_payload_classes_map_to_their_merge_mode(payload, mode):
    assert resolve(6, **{PAYLOAD: payload, PRECOMBINE: "ts"}) == MergeConfig(mode, ("ts",))


def test_v6_without_payload_class_merges_as_hudi_0x_default_commit_time():
    assert resolve(6, **{PRECOMBINE: "ts"}).mode is COMMIT


def test_v6_ignores_the_0x_default_merger_strategy_id():
    props = {PAYLOAD: OVERWRITE_WITH_LATEST, "hoodie.compaction.record.merger.strategy": "x"}
    assert resolve(6, **props).mode is COMMIT


@pytest.mark.parametrize("version", [6, 8])
def test_custom_payload_class_is_an_error_naming_it(version):
    with pytest.raises(ConfigError) as caught:
        resolve(version, **{PAYLOAD: "com.acme.MyPayload", PRECOMBINE: "ts"})
    assert "com.acme.MyPayload" in str(caught.value)
    assert "/tables/t" in str(caught.value) and "CUSTOM" in str(caught.value)


def test_v8_strategy_id_wins_over_the_payload_class():
    props = {STRATEGY: mkeys.COMMIT_TIME_STRATEGY_ID, PAYLOAD: OVERWRITE_WITH_LATEST}
    assert resolve(8, **props, **{PRECOMBINE: "ts"}).mode is COMMIT


def test_v8_without_payload_or_strategy_infers_from_the_ordering_field():
    assert resolve(8, **{PRECOMBINE: "ts"}).mode is EVENT
    assert resolve(8).mode is COMMIT


def test_v8_declared_mode_conflicting_with_the_payload_is_an_error():
    with pytest.raises(ConfigError, match=MODE):
        resolve(8, **{MODE: "COMMIT_TIME_ORDERING", PAYLOAD: DEFAULT_PAYLOAD, PRECOMBINE: "ts"})


@pytest.mark.parametrize("mode", ["EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"])
def test_v9_declared_merge_mode_is_used(mode):
    assert resolve(9, **{MODE: mode, ORDERING: "ts"}).mode is MergeMode(mode)


def test_v9_custom_merge_mode_is_an_error():
    with pytest.raises(ConfigError, match="custom merger"):
        resolve(9, **{MODE: "CUSTOM", ORDERING: "ts", PAYLOAD: "com.acme.MyPayload"})


def test_v9_several_ordering_fields_are_kept_in_order():
    merge = resolve(9, **{MODE: "EVENT_TIME_ORDERING", ORDERING: "day, seq ,ts"})
    assert merge.ordering_fields == ("day", "seq", "ts")
    assert merge.ordering_field is None  # no single field: callers compare tuples


def test_event_time_without_ordering_fields_orders_by_commit_time_as_hudi_does():
    assert resolve(9, **{MODE: "EVENT_TIME_ORDERING"}) == MergeConfig(COMMIT)


@pytest.mark.parametrize("partial", ["IGNORE_DEFAULTS", "FILL_UNAVAILABLE", "IGNORE_MARKERS"])
def test_partial_update_modes_are_an_error_naming_the_key(partial):
    with pytest.raises(ConfigError) as caught:
        resolve(
            9,
            **{MODE: "EVENT_TIME_ORDERING", ORDERING: "ts", mkeys.PARTIAL_UPDATE_MODE.key: partial},
        )
    message = str(caught.value)
    assert mkeys.PARTIAL_UPDATE_MODE.key in message and partial in message
    assert "table version 8" in message and PARTIAL_UPDATE_PAYLOAD in message  # says why


@pytest.mark.parametrize("version", [8, 9])
def test_partial_update_payload_is_custom_after_version_6_as_hudi_1x_infers(version):
    with pytest.raises(ConfigError, match="CUSTOM") as caught:
        resolve(version, **{PAYLOAD: PARTIAL_UPDATE_PAYLOAD, PRECOMBINE: "ts"})
    assert PARTIAL_UPDATE_PAYLOAD in str(caught.value)


def test_migrated_payload_merge_properties_are_an_error_naming_them():
    key = mkeys.RECORD_MERGE_PROPERTY_PREFIX + "hoodie.payload.delete.field"
    with pytest.raises(ConfigError, match=key):
        resolve(9, **{MODE: "EVENT_TIME_ORDERING", ORDERING: "ts", key: "Op"})


def test_real_v9_tables_are_event_time_ordered_by_txn_ts(hudi_tables):
    from pyhudi.table.context import TableContext

    for name in [n for n in hudi_tables if "__v9_" in n]:
        ctx = TableContext.open(str(hudi_tables[name]))
        assert resolve_merge_config(ctx.config) == MergeConfig(EVENT, ("txn_ts",)), name
