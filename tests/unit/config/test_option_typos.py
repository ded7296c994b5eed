"""Misspelt option keys are errors naming the key meant, on writes, reads and services alike."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from pyhudi.config.typos import edit_distance, is_misspelling
from pyhudi.config.unknown import (
    check_read_options,
    check_service_options,
    check_write_options,
    misspelt_keys,
)
from pyhudi.exceptions import ConfigError

HUDI_KEYS = Path(__file__).with_name("hudi_keys_not_declared.txt")


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        (
            "hoodie.datasource.write.partitionpath.feild",
            "hoodie.datasource.write.partitionpath.field",
        ),
        ("hoodie.datasource.write.operatoin", "hoodie.datasource.write.operation"),
        ("hoodi.datasource.write.operation", "hoodie.datasource.write.operation"),
        ("datasource.write.operation", "hoodie.datasource.write.operation"),
        ("hoodie.datasource.write.recordkey..field", "hoodie.datasource.write.recordkey.field"),
        ("hoodie.Table.Name", "hoodie.table.name"),
        ("pyhudi.options.strikt", "pyhudi.options.strict"),
    ],
)
def test_misspelt_write_key_is_config_error_naming_the_key_meant(given, meant):
    with pytest.raises(
        ConfigError, match=rf"{given!r} \(did you mean {meant!r}\?\)".replace(".", r"\.")
    ):
        check_write_options({"hoodie.table.name": "t", given: "x"})


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("hoodie.datasource.query.typ", "hoodie.datasource.query.type"),
        ("as.of.instnt", "as.of.instant"),
        ("hoodie.datasource.read.begin.instanttme", "hoodie.datasource.read.begin.instanttime"),
    ],
)
def test_misspelt_read_key_is_config_error_naming_the_key_meant(given, meant):
    with pytest.raises(ConfigError, match=f"did you mean '{meant}'"):
        check_read_options({given: "incremental"})


def test_misspelt_service_key_is_config_error():
    with pytest.raises(
        ConfigError, match=re.escape("did you mean 'hoodie.cleaner.commits.retained'")
    ):
        check_service_options({"hoodie.cleaner.commits.retaind": "2"})


@pytest.mark.parametrize(
    "key",
    [
        "path",
        "mergeSchema",
        "mergeschema",
        "checkpointLocation",
        "checkpointlocation",
        "spark.sql.shuffle.partitions",
        "spark.sql.sources.partitionOverwriteMode",
        "header",
        "location",
        "primaryKey",
        "precombinefield",
        "_checkpoint",  # the default commit-metadata prefix: goes to extraMetadata
        "pyhudi.services.async",  # set by streaming writes on their micro-batches
    ],
)
def test_spark_and_other_non_hudi_keys_pass_silently_on_writes_and_reads(key):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_write_options({"hoodie.table.name": "t", key: "x"})
        check_read_options({key: "x"})


def test_strict_false_turns_a_misspelling_into_a_warning_naming_the_key_meant():
    options = {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.partitionpath.feild": "city",
        "pyhudi.options.strict": "false",
    }
    with pytest.warns(
        UserWarning, match=re.escape("did you mean 'hoodie.datasource.write.partitionpath.field'")
    ):
        check_write_options(options)


def test_unknown_hoodie_key_warning_says_only_that_pyhudi_does_not_use_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_read_options({"hoodie.metrics.on": "true"})
    assert [str(w.message) for w in caught] == ["not used by pyhudi: hoodie.metrics.on"]


def test_unknown_pyhudi_key_far_from_any_declared_one_is_a_warning():
    with pytest.warns(
        UserWarning, match=re.escape("not used by pyhudi: pyhudi.some.future.option")
    ):
        check_write_options({"hoodie.table.name": "t", "pyhudi.some.future.option": "1"})


def test_no_real_hudi_key_is_taken_for_a_misspelling():
    keys = [
        line.strip()
        for line in HUDI_KEYS.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(keys) > 150
    assert misspelt_keys(dict.fromkeys(keys, "x")) == {}


def test_declared_keys_one_edit_apart_are_not_misspellings_of_each_other():
    assert misspelt_keys({"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"}) == {}


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("field", "feild", 1), ("operation", "operatoin", 1), ("typ", "type", 1), ("abc", "abc", 0)],
)
def test_edit_distance_counts_adjacent_swaps_as_one_edit(a, b, distance):
    assert edit_distance(a, b, 3) == distance


def test_a_segment_misspelt_beyond_two_edits_is_still_a_misspelling_when_the_segment_is_long():
    assert is_misspelling(
        "hoodie.datasource.write.partitonpth.field", "hoodie.datasource.write.partitionpath.field"
    )
    assert not is_misspelling("hoodie.index.typo.x", "hoodie.index.type")


def test_no_key_apache_hudi_0_15_or_1_2_declares_is_taken_for_a_misspelling():
    """Hudi 1.x renamed keys (`hoodie.clean.commits.retained` for `hoodie.cleaner...`): every key
    of either release's bundle is Hudi's own, never a typo of a pyhudi key."""
    from pyhudi.config.unknown import hudi_keys, misspelt_keys

    assert len(hudi_keys()) > 600
    assert misspelt_keys(dict.fromkeys(hudi_keys(), "1")) == {}


def test_hudi_1_x_clean_key_names_are_aliases():
    from pyhudi.config.clean import CleanConfig

    config = CleanConfig.from_options(
        {
            "hoodie.clean.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.clean.fileversions.retained": "1",
        }
    )
    assert (config.policy.value, config.file_versions_retained) == ("KEEP_LATEST_FILE_VERSIONS", 1)
