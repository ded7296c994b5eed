"""`pyhudi bootstrap --source ... --target ...`: turn an existing parquet/ORC table into a Hudi table."""

from __future__ import annotations

import argparse

from pyhudi.cli.service_cmds import _options


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "bootstrap", help="bootstrap an existing parquet/ORC table (METADATA_ONLY or FULL_RECORD)"
    )
    parser.add_argument("--source", required=True, help="the existing table's base folder")
    parser.add_argument("--target", required=True, help="the Hudi table to create")
    parser.add_argument(
        "--table-name", default=None, help="hoodie.table.name (default: the target folder's name)"
    )
    parser.add_argument(
        "--record-key", default=None, help="hoodie.datasource.write.recordkey.field"
    )
    parser.add_argument(
        "--partition-field", default=None, help="hoodie.datasource.write.partitionpath.field"
    )
    parser.add_argument(
        "--mode",
        choices=("METADATA_ONLY", "FULL_RECORD", "REGEX"),
        default="METADATA_ONLY",
        help="the mode selector (REGEX: --regex partitions get --regex-mode, the rest the other mode)",
    )
    parser.add_argument("--regex", default=None, help="hoodie.bootstrap.mode.selector.regex")
    parser.add_argument("--regex-mode", default=None, choices=("METADATA_ONLY", "FULL_RECORD"))
    parser.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="any Hudi option (repeatable)"
    )
    parser.add_argument(
        "--spark",
        action="store_true",
        help="run the per-file work as local Spark tasks (default: local threads, no Spark)",
    )
    parser.set_defaults(handler=run)


_SELECTORS = {
    "METADATA_ONLY": "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector",
    "FULL_RECORD": "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector",
    "REGEX": "org.apache.hudi.client.bootstrap.selector.BootstrapRegexModeSelector",
}


def run(args: argparse.Namespace) -> int:
    import os

    from pyhudi.bootstrap import bootstrap

    options = {
        "hoodie.bootstrap.base.path": args.source,
        "hoodie.table.name": args.table_name or os.path.basename(os.path.abspath(args.target)),
        "hoodie.bootstrap.mode.selector": _SELECTORS[args.mode],
    }
    for key, value in (
        ("hoodie.datasource.write.recordkey.field", args.record_key),
        ("hoodie.datasource.write.partitionpath.field", args.partition_field),
        ("hoodie.bootstrap.mode.selector.regex", args.regex),
        ("hoodie.bootstrap.mode.selector.regex.mode", args.regex_mode),
    ):
        if value:
            options[key] = value
    options.update(_options(args.option))
    if args.spark:
        from pyhudi.spark.session import local_session

        spark = local_session("pyhudi-bootstrap")
    else:
        spark = None  # the per-file work on local threads: no JVM start-up
    print(bootstrap(spark, args.target, options).summary())
    return 0
