"""`pyhudi savepoint create|list|delete|restore` and `pyhudi rollback` (docs/savepoints.md)."""

from __future__ import annotations

import argparse
import json

from pyhudi.cli.format import table
from pyhudi.cli.service_cmds import _options
from pyhudi.services import savepoint


def register(commands: argparse._SubParsersAction) -> None:
    group = commands.add_parser(
        "savepoint", help="savepoints: keep a commit restorable, restore to it"
    ).add_subparsers(dest="action", required=True)
    create = group.add_parser("create", help="savepoint a completed commit (default: the latest)")
    _add(create)
    create.add_argument("--instant", default=None, help="the commit to savepoint")
    create.add_argument("--user", default="", help="recorded as savepointedBy")
    create.add_argument("--comment", default="", help="recorded with the savepoint")
    create.set_defaults(handler=_create)
    listing = group.add_parser("list", help="the table's savepoints")
    listing.add_argument("path", help="table base path")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=_list)
    for name, handler, doc in (
        ("delete", _delete, "delete a savepoint (the cleaner may then remove its files)"),
        ("restore", _restore, "roll the table back to a savepoint (stop its writers first)"),
    ):
        sub = group.add_parser(name, help=doc)
        _add(sub)
        sub.add_argument("instant", help="the savepoint's instant time")
        sub.set_defaults(handler=handler)
    rollback = commands.add_parser("rollback", help="roll back the table's latest commit")
    _add(rollback)
    rollback.add_argument("instant", help="the commit's instant time")
    rollback.set_defaults(handler=_rollback)


def _add(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="table base path")
    parser.add_argument(
        "--option", "-o", action="append", metavar="KEY=VALUE", help="a Hudi option (repeatable)"
    )


def _create(args: argparse.Namespace) -> int:
    info = savepoint.create_savepoint(
        args.path,
        args.instant,
        user=args.user,
        comment=args.comment,
        options=_options(args.option),
    )
    print(info)
    return 0


def _list(args: argparse.Namespace) -> int:
    found = savepoint.savepoints(args.path)
    rows = [
        {
            "instant": s.instant_time,
            "user": s.user,
            "savepointed_at": s.savepointed_at.isoformat(timespec="seconds"),
            "files": s.file_count,
            "comment": s.comment,
        }
        for s in found
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print(table(list(rows[0]), [list(r.values()) for r in rows]))
    else:
        print("no savepoint")
    return 0


def _delete(args: argparse.Namespace) -> int:
    info = savepoint.delete_savepoint(args.path, args.instant, options=_options(args.option))
    print(f"deleted {info}")
    return 0


def _restore(args: argparse.Namespace) -> int:
    print(savepoint.restore_to_savepoint(args.path, args.instant, options=_options(args.option)))
    return 0


def _rollback(args: argparse.Namespace) -> int:
    print(savepoint.rollback_to_instant(args.path, args.instant, options=_options(args.option)))
    return 0
