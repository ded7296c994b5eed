"""Declared keys given a value pyhudi cannot honour are errors (or truthful warnings)."""

from __future__ import annotations

import re
import warnings

import pytest

from pyhudi.config.unknown import check_read_options, check_write_options
from pyhudi.exceptions import ConfigError


def _write(**options: str) -> None:
    check_write_options({"hoodie.table.name": "t", **options})


@pytest.mark.parametrize("version", ["5", "7", "10"])
@pytest.mark.parametrize("key", ["hoodie.write.table.version", "hoodie.table.version"])
def test_table_version_pyhudi_cannot_write_is_config_error_naming_the_versions(key, version):
    with pytest.raises(
        ConfigError, match=rf"{key}='{version}'.*pyhudi writes table versions 6, 8, 9"
    ):
        _write(**{key: version})


@pytest.mark.parametrize("version", ["6", "8", "9"])
def test_table_versions_6_8_and_9_are_accepted_silently(version):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _write(**{"hoodie.write.table.version": version})


def test_cdc_enabled_on_a_write_is_accepted():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _write(**{"hoodie.table.cdc.enabled": "true"})


@pytest.mark.parametrize("mode", ["IGNORE_DEFAULTS", "KEEP_VALUES"])
def test_a_hudi_1x_partial_update_mode_on_a_write_is_config_error_naming_the_payload(mode):
    with pytest.raises(
        ConfigError,
        match=rf"partial\.update\.mode='{mode}'.*version 8\+.*PartialUpdateAvroPayload",
    ):
        _write(**{"hoodie.table.partial.update.mode": mode})


def test_cdc_disabled_on_a_write_is_accepted():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _write(**{"hoodie.table.cdc.enabled": "false"})


@pytest.mark.parametrize("query_format", ["latest_state", "cdc"])
def test_both_incremental_query_formats_are_accepted(query_format):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_read_options({"hoodie.datasource.query.incremental.format": query_format})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hoodie.compaction.preserve.commit.metadata", "false"),
        ("hoodie.clustering.preserve.commit.metadata", "false"),
        ("hoodie.index.bucket.engine", "CONSISTENT_HASHING"),
        ("hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled", "true"),
        ("hoodie.table.base.file.format", "ORC"),
        ("hoodie.timeline.layout.version", "3"),
    ],
)
def test_declared_key_with_a_value_that_would_change_results_is_config_error(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        _write(**{key: value})


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("hoodie.write.markers.type", "TIMELINE_SERVER_BASED", "direct markers"),
        ("hoodie.rollback.using.markers", "false", "from their markers"),
        ("hoodie.logfile.max.size", "1024", "new log file version per write"),
    ],
)
def test_declared_key_with_a_harmless_ignored_value_is_a_truthful_warning(key, value, says):
    with pytest.warns(UserWarning, match=says):
        _write(**{key: value})


def test_table_partition_fields_without_the_write_option_is_config_error():
    with pytest.raises(ConfigError, match=re.escape("hoodie.datasource.write.partitionpath.field")):
        _write(**{"hoodie.table.partition.fields": "city"})
