"""A fresh bucket on the tests' S3 endpoint (moto, `tests/conftest.py`) for each test."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def bucket(s3_server) -> str:  # type: ignore[no-untyped-def]
    """`s3://<new bucket>`: an empty bucket of its own."""
    import boto3

    name = f"lake-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_server.url).create_bucket(Bucket=name)
    return f"s3://{name}"
