"""`Storage.uri`: the URI engines take for a `pyarrow.fs` path, naming the bucket once."""

from __future__ import annotations

import pyarrow.fs as pafs
import pytest

from pyhudi.storage import Storage


@pytest.mark.parametrize(
    ("scheme", "authority", "path", "uri"),
    [
        ("s3", "lake", "lake/t/.hoodie", "s3://lake/t/.hoodie"),
        ("s3", "lake", "lake", "s3://lake/"),
        ("s3", "lake", "", "s3://lake/"),
        ("gs", "bk", "bk/t/p=1/f.parquet", "gs://bk/t/p=1/f.parquet"),
        (
            "abfs",
            "cont@acct.dfs.core.windows.net",
            "cont/t",
            "abfs://cont@acct.dfs.core.windows.net/t",
        ),
        ("hdfs", "namenode:8020", "/warehouse/t", "hdfs://namenode:8020/warehouse/t"),
        ("s3", "lake", "lakehouse/t", "s3://lake/lakehouse/t"),  # a prefix of the name is not it
    ],
)
def test_the_bucket_or_container_is_named_once(scheme, authority, path, uri):
    storage = Storage(pafs.LocalFileSystem(), scheme, authority)
    assert storage.uri(path) == uri


def test_azure_uris_round_trip_through_for_uri():
    storage, path = Storage.for_uri("abfs://cont@acct.dfs.core.windows.net/t/x")
    assert path == "cont/t/x"
    assert storage.uri(path) == "abfs://cont@acct.dfs.core.windows.net/t/x"


def test_local_paths_are_file_uris():
    storage, path = Storage.for_uri("/data/t")
    assert storage.uri(path) == "file:///data/t"


@pytest.mark.parametrize("scheme", ["s3a", "s3n"])
def test_hadoop_s3_schemes_open_as_s3_and_keep_their_name(scheme):
    storage, path = Storage.for_uri(f"{scheme}://lake/t?region=us-east-1")
    assert isinstance(storage.fs, pafs.S3FileSystem)
    assert (storage.scheme, path) == (scheme, "lake/t")
    assert storage.uri(path) == f"{scheme}://lake/t"
