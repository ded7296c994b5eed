"""`pyhudi show locks` (who holds the table lock, since when, until when) and `pyhudi show
heartbeats` (writers' heartbeats: instant, last beat, live or expired)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from pyhudi.cli.format import table
from pyhudi.cli.service_cmds import _options
from pyhudi.config import concurrency as ckeys
from pyhudi.table.context import TableContext
from pyhudi.table.lock.inspect import heartbeat_states, lock_states


def register_show(show: argparse._SubParsersAction) -> None:
    for name, handler, doc in (
        ("locks", show_locks, "lock files of the table: holder, since, expiry"),
        ("heartbeats", show_heartbeats, "writer heartbeats: instant, last beat, live/expired"),
    ):
        sub = show.add_parser(name, help=doc)
        sub.add_argument("path", help="table base path")
        sub.add_argument("--json", action="store_true", help="machine-readable output")
        sub.add_argument(
            "--option",
            "-o",
            action="append",
            metavar="KEY=VALUE",
            help="the writers' lock / heartbeat options (lock folder, expiry, interval)",
        )
        sub.set_defaults(handler=handler)


def show_locks(args: argparse.Namespace) -> int:
    options = _options(args.option)
    ctx = TableContext.open(args.path)
    states = lock_states(
        ctx.storage,
        ctx.base_path,
        ckeys.FILESYSTEM_LOCK_PATH.get(options),
        ckeys.FILESYSTEM_LOCK_EXPIRE.get(options),
    )
    rows = [dataclasses.asdict(s) for s in states]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print(
            table(
                ["provider", "path", "holder", "since", "expires"], [list(r.values()) for r in rows]
            )
        )
    else:
        print("no lock file: nobody holds the table lock (in-process locks are not visible)")
    return 0


def show_heartbeats(args: argparse.Namespace) -> int:
    options = _options(args.option)
    ctx = TableContext.open(args.path)
    states = heartbeat_states(ctx, ckeys.heartbeat_expiry_ms(options))
    rows = [dataclasses.asdict(s) for s in states]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print(
            table(
                ["instant", "last beat (UTC)", "age s", "instant state", "status"],
                [
                    [
                        r["instant_time"],
                        r["last_beat"],
                        r["age_s"],
                        r["instant_state"],
                        "live" if r["live"] else "expired",
                    ]
                    for r in rows
                ],
            )
        )
    else:
        print("no heartbeats: no write is running")
    return 0
