"""moto's AWS Glue as a real endpoint for the Glue sync tests: `python -m moto.server` on a free
127.0.0.1 port, in its own process; boto3 (the sync's and the tests') talks HTTP to it through
`AWS_ENDPOINT_URL_GLUE`, as a user points boto3 at a Glue endpoint. The credentials are dummies:
nothing here reaches AWS."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.s3 import ACCESS_KEY, REGION, SECRET_KEY, MotoServer, free_port


@contextmanager
def glue_endpoint(log_dir: Path) -> Iterator[str]:
    """The URL of a fresh moto server, with boto3's environment pointing Glue at it meanwhile."""
    server = MotoServer.start(free_port(), log_dir / "moto-glue.log")
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("AWS_ENDPOINT_URL_GLUE", server.url)
            env.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            env.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            env.setenv("AWS_REGION", REGION)
            env.setenv("AWS_DEFAULT_REGION", REGION)
            yield server.url
    finally:
        server.stop()


def glue_client(url: str) -> Any:
    """The tests' own view of the catalog (a separate client from the sync's)."""
    import boto3

    return boto3.client(
        "glue",
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )


def partitions(client: Any, database: str, table: str) -> dict[tuple[str, ...], dict[str, Any]]:
    """Partition values -> the Glue partition, every page."""
    pages = client.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=table)
    return {tuple(p["Values"]): p for page in pages for p in page["Partitions"]}


def locations(client: Any, database: str, table: str) -> dict[tuple[str, ...], str]:
    return {
        values: p["StorageDescriptor"]["Location"]
        for values, p in partitions(client, database, table).items()
    }


def columns(descriptor_or_table: dict[str, Any], key: str = "Columns") -> list[tuple[str, str]]:
    return [(c["Name"], c["Type"]) for c in descriptor_or_table.get(key, [])]
