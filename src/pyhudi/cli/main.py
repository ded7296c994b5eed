"""The `pyhudi` command line (in the spirit of hudi-cli): inspect tables, logs and run services."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from pyhudi.exceptions import HudiError

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyhudi", description="Apache Hudi tables on PySpark, no Hudi jars."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    from pyhudi.cli import demo, inspect_cmds

    inspect_cmds.register(commands)
    demo.register(commands)
    for optional in (
        "pyhudi.cli.log_cmds",
        "pyhudi.cli.service_cmds",
        "pyhudi.cli.bootstrap_cmd",
        "pyhudi.cli.metadata_cmds",
    ):
        try:
            module = __import__(optional, fromlist=["register"])
        except ImportError:
            continue
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except HudiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
