"""Bootstrap options (`HoodieBootstrapConfig`)."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, integer, string

BASE_PATH = string(
    "hoodie.bootstrap.base.path", None, "The existing parquet/ORC table to bootstrap from."
)
MODE_SELECTOR = string(
    "hoodie.bootstrap.mode.selector",
    "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector",
    "Which partitions are bootstrapped METADATA_ONLY and which FULL_RECORD "
    "(MetadataOnly-, FullRecord- or BootstrapRegexModeSelector).",
)
MODE_SELECTOR_REGEX = string(
    "hoodie.bootstrap.mode.selector.regex",
    ".*",
    "Regex selector: partitions fully matching it get the regex mode.",
)
MODE_SELECTOR_REGEX_MODE = choice(
    "hoodie.bootstrap.mode.selector.regex.mode",
    "METADATA_ONLY",
    ("METADATA_ONLY", "FULL_RECORD"),
    "Regex selector: the mode of matching partitions (the others get the other mode).",
)
FULL_INPUT_PROVIDER = string(
    "hoodie.bootstrap.full.input.provider",
    "org.apache.hudi.bootstrap.SparkParquetBootstrapDataProvider",
    "How FULL_RECORD partitions are read (the source files as they are).",
)
PARTITION_PATH_TRANSLATOR = string(
    "hoodie.bootstrap.partitionpath.translator.class",
    "org.apache.hudi.client.bootstrap.translator.IdentityBootstrapPartitionPathTranslator",
    "Maps source partition folders to Hudi partition paths (identity).",
)
PARALLELISM = integer(
    "hoodie.bootstrap.parallelism", 0, "Tasks of the skeleton job (0: Spark's default)."
)
INDEX_ENABLE = boolean(
    "hoodie.bootstrap.index.enable", True, "Write the HFile bootstrap index (required to read)."
)
