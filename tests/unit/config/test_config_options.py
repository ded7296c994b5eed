"""`pyhudi.config.options`: parsing typed option values, aliases, and the option registry."""

from __future__ import annotations

from collections import defaultdict

import pytest

from pyhudi.config import (
    REGISTRY,
    ConfigOption,
    all_options,
    archival,
    clean,
    clustering,
    compaction,
    index,
    keygen,
    read,
    table,
    write,
)
from pyhudi.config.options import boolean, choice, integer, number, string, string_list
from pyhudi.exceptions import ConfigError

CONFIG_MODULES = (archival, clean, clustering, compaction, index, keygen, read, table, write)


def declared_options() -> list[tuple[str, ConfigOption]]:
    """(module.NAME, option) for every option declared at module level in `pyhudi.config`."""
    found = []
    for module in CONFIG_MODULES:
        for name, value in vars(module).items():
            if isinstance(value, ConfigOption):
                found.append((f"{module.__name__.rsplit('.', 1)[-1]}.{name}", value))
    return found


# ---- value parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"), [("true", True), ("false", False), (" TRUE ", True), ("False", False)]
)
def test_boolean_option_parses_true_false_case_insensitively(raw, expected):
    assert write.INSERT_DROP_DUPLICATES.get({write.INSERT_DROP_DUPLICATES.key: raw}) is expected


@pytest.mark.parametrize("raw", ["yes", "1", "", "tru"])
def test_boolean_option_rejects_other_words_with_config_error_naming_key(raw):
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.write\.insert\.drop\.duplicates"):
        write.INSERT_DROP_DUPLICATES.get({write.INSERT_DROP_DUPLICATES.key: raw})


def test_integer_option_parses_padded_digits():
    assert write.PARQUET_MAX_FILE_SIZE.get({"hoodie.parquet.max.file.size": " 1024 "}) == 1024


@pytest.mark.parametrize("raw", ["12MB", "1.5", "", "ten"])
def test_integer_option_rejects_non_integers_with_config_error_naming_key(raw):
    with pytest.raises(ConfigError, match=r"hoodie\.parquet\.max\.file\.size") as caught:
        write.PARQUET_MAX_FILE_SIZE.get({"hoodie.parquet.max.file.size": raw})
    assert isinstance(caught.value.__cause__, ValueError)
    assert repr(raw) in str(caught.value)


def test_number_option_parses_floats_and_rejects_words():
    assert index.BLOOM_FPP.get({"hoodie.index.bloom.fpp": "0.01"}) == pytest.approx(0.01)
    with pytest.raises(ConfigError, match=r"hoodie\.index\.bloom\.fpp"):
        index.BLOOM_FPP.get({"hoodie.index.bloom.fpp": "tiny"})


def test_choice_option_returns_canonical_spelling_for_any_case():
    assert write.OPERATION.get({write.OPERATION.key: "BULK_INSERT"}) == "bulk_insert"
    assert table.TYPE.get({table.TYPE.key: "merge_on_read"}) == "MERGE_ON_READ"
    assert index.INDEX_TYPE.get({index.INDEX_TYPE.key: " global_bloom "}) == "GLOBAL_BLOOM"


def test_choice_option_rejects_unknown_value_listing_the_choices():
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.write\.operation.*upsert, insert"):
        write.OPERATION.get({write.OPERATION.key: "merge"})


def test_string_list_option_splits_on_commas_and_drops_blanks():
    option = write.PARTITIONS_TO_DELETE
    assert option.get({option.key: " a=1 , b=2,, "}) == ("a=1", "b=2")


def test_unset_option_returns_its_default_and_is_not_set():
    assert not write.OPERATION.is_set({})
    assert write.OPERATION.get({}) == "upsert"
    assert write.PARQUET_MAX_FILE_SIZE.get({}) == 120 * 1024 * 1024
    assert table.DATABASE.get({}) is None


def test_option_reads_value_given_under_alias():
    assert table.BASE_FILE_FORMAT.get({"hoodie.table.ro.file.format": "orc"}) == "ORC"
    assert write.PAYLOAD_CLASS.raw({"hoodie.compaction.payload.class": "x.Y"}) == "x.Y"


def test_option_key_wins_over_alias_when_both_are_given():
    options = {"hoodie.table.base.file.format": "HFILE", "hoodie.table.ro.file.format": "ORC"}
    assert table.BASE_FILE_FORMAT.get(options) == "HFILE"


def test_bad_value_under_alias_is_reported_with_canonical_key():
    with pytest.raises(ConfigError, match=r"hoodie\.table\.base\.file\.format"):
        table.BASE_FILE_FORMAT.get({"hoodie.table.ro.file.format": "csv"})


@pytest.fixture
def scratch_registry():
    """Options declared by a test are removed from the global registry afterwards."""
    saved = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(saved)


def test_factories_record_kind_default_and_aliases(scratch_registry):
    opt = integer("test.pyhudi.unit.int", 3, "doc", "test.pyhudi.unit.int.old")
    assert (opt.kind, opt.default, opt.aliases) == ("integer", 3, ("test.pyhudi.unit.int.old",))
    assert REGISTRY["test.pyhudi.unit.int.old"] is opt
    assert choice("test.pyhudi.unit.choice", "A", ("A", "B"), "doc").choices == ("A", "B")
    assert string("test.pyhudi.unit.string", None, "doc").kind == "string"
    assert boolean("test.pyhudi.unit.bool", False, "doc").kind == "boolean"
    assert number("test.pyhudi.unit.number", 1.0, "doc").kind == "number"
    assert string_list("test.pyhudi.unit.list", None, "doc").kind == "list"


# ---- the registry -----------------------------------------------------------------------------


def test_all_options_yields_each_key_once_sorted():
    keys = [option.key for option in all_options()]
    assert keys == sorted(set(keys))
    assert len(keys) > 50


def test_every_option_has_a_doc_sentence():
    undocumented = [o.key for o in all_options() if not (o.doc and o.doc.strip())]
    assert undocumented == []
    assert all(option.doc.strip() for _, option in declared_options())


def test_every_option_key_is_a_hoodie_pyhudi_or_known_datasource_key():
    for option in all_options():
        assert option.key.startswith(("hoodie.", "pyhudi.", "as.of.instant")), option.key


def test_choice_defaults_are_among_their_choices():
    for name, option in declared_options():
        if option.choices is not None and option.default is not None:
            assert option.default in option.choices, name


def test_registry_resolves_every_declared_key_and_alias():
    for _, option in declared_options():
        for name in (option.key, *option.aliases):
            assert name in REGISTRY


def test_every_key_is_declared_by_exactly_one_option():
    # A module may re-export another module's option under its own name: one object, one declaration.
    by_key: dict[str, dict[int, str]] = defaultdict(dict)
    for name, option in declared_options():
        by_key[option.key].setdefault(id(option), name)
    duplicates = {key: sorted(names.values()) for key, names in by_key.items() if len(names) > 1}
    assert duplicates == {}
