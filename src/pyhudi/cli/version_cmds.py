"""`pyhudi table upgrade|downgrade --to N PATH`: change a table's version as Apache Hudi 1.2's
`CALL upgrade_table` / `CALL downgrade_table` do (docs/table-versions.md)."""

from __future__ import annotations

import argparse

from pyhudi.cli.service_cmds import _options
from pyhudi.table.context import TableContext


def register(commands: argparse._SubParsersAction) -> None:
    group = commands.add_parser(
        "table", help="table versions: upgrade (6 -> 8 -> 9) and downgrade"
    ).add_subparsers(dest="action", required=True)
    upgrade = group.add_parser("upgrade", help="upgrade the table to version 8 or 9 (Hudi 1.x)")
    _add(upgrade, default=9)
    upgrade.set_defaults(handler=_upgrade)


def _add(parser: argparse.ArgumentParser, *, default: int | None = None) -> None:
    parser.add_argument("path", help="table base path")
    parser.add_argument(
        "--to",
        type=int,
        required=default is None,
        default=default,
        metavar="VERSION",
        help="the table version to reach" + (f" (default {default})" if default else ""),
    )
    parser.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="a Hudi option (repeatable)"
    )


def _upgrade(args: argparse.Namespace) -> int:
    from pyhudi.client.upgrade import upgrade_table

    spark = None
    if TableContext.open(args.path).config.is_merge_on_read:  # its log files are compacted first
        from pyhudi.spark.session import local_session

        spark = local_session("pyhudi-upgrade")
    print(upgrade_table(spark, args.path, args.to, _options(args.option)))
    return 0
