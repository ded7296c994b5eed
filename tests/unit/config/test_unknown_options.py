"""Option keys pyhudi does not implement are never ignored silently (write side)."""

from __future__ import annotations

import warnings

import pytest

from pyhudi.config.unknown import check_write_options
from pyhudi.exceptions import ConfigError


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hoodie.record.merge.strategy.id", "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"),
        ("hoodie.datasource.write.record.merger.impls", "com.example.Merger"),
        ("hoodie.schema.on.read.enable", "true"),
        ("hoodie.bulkinsert.user.defined.partitioner.class", "com.example.Partitioner"),
        ("hoodie.index.class", "com.example.Index"),
        ("hoodie.payload.event.time.field", "ts"),
    ],
)
def test_unknown_key_that_changes_results_is_config_error_naming_it(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        check_write_options({"hoodie.table.name": "t", key: value})


def test_disabled_unknown_feature_is_only_a_warning():
    with pytest.warns(UserWarning, match="hoodie.schema.on.read.enable"):
        check_write_options({"hoodie.schema.on.read.enable": "false"})


def test_read_side_table_property_on_a_write_is_a_warning():
    with pytest.warns(UserWarning, match="hoodie.table.keygenerator.type"):
        check_write_options({"hoodie.table.name": "t", "hoodie.table.keygenerator.type": "SIMPLE"})


def test_other_unknown_hoodie_keys_get_one_warning_listing_them_all():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_write_options(
            {
                "hoodie.table.name": "t",
                "hoodie.metrics.on": "true",
                "hoodie.metrics.reporter.type": "JMX",
                "spark.sql.shuffle.partitions": "2",
            }
        )
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "hoodie.metrics.on, hoodie.metrics.reporter.type" in text
    assert "spark.sql" not in text and "hoodie.table.name" not in text


def test_declared_and_harmless_keys_pass_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_write_options(
            {
                "hoodie.table.name": "t",
                "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                "hoodie.write.lock.provider": "x",
                "hoodie.embed.timeline.server": "false",
                "hoodie.filesystem.view.type": "MEMORY",
            }
        )
