"""`pyhudi table upgrade|downgrade --to N PATH`: change a table's version as Apache Hudi 1.2's
`CALL upgrade_table` / `CALL downgrade_table` do (docs/table-versions.md)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pyhudi.cli.service_cmds import _options
from pyhudi.table.context import TableContext

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def register(commands: argparse._SubParsersAction) -> None:
    group = commands.add_parser(
        "table", help="table versions: upgrade (6 -> 8 -> 9) and downgrade"
    ).add_subparsers(dest="action", required=True)
    upgrade = group.add_parser("upgrade", help="upgrade the table to version 8 or 9 (Hudi 1.x)")
    _add(upgrade, default=9)
    upgrade.set_defaults(handler=_upgrade)
    downgrade = group.add_parser("downgrade", help="downgrade the table to version 8 or 6")
    _add(downgrade)
    downgrade.set_defaults(handler=_downgrade)


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

    print(upgrade_table(_spark(args.path), args.path, args.to, _options(args.option)))
    return 0


def _downgrade(args: argparse.Namespace) -> int:
    from pyhudi.client.upgrade import downgrade_table

    print(downgrade_table(_spark(args.path), args.path, args.to, _options(args.option)))
    return 0


def _spark(path: str) -> SparkSession | None:
    """A local session for a merge-on-read table, whose log files are compacted first."""
    if not TableContext.open(path).config.is_merge_on_read:
        return None
    from pyhudi.spark.session import local_session

    return local_session("pyhudi-table-version")
