"""Which file ids are a bucket index's, and when a table's file groups are buckets."""

from __future__ import annotations

from pyhudi.index.bucket import bucket_file_id
from pyhudi.index.table_layout import MAX_BUCKET_NUMBER, bucket_of_file_id, is_bucket_layout


def test_bucket_file_ids_give_their_bucket_and_random_ids_none() -> None:
    assert [bucket_of_file_id(bucket_file_id(b)) for b in (0, 1, 255, 9999)] == [0, 1, 255, 9999]
    # Hudi's own: the bucket number in place of a UUID's first eight characters.
    assert bucket_of_file_id("00000003-6b1f-4f0e-9d2c-1a2b3c4d5e6f-0") == 3
    assert bucket_of_file_id("3fa85f64-5717-4562-b3fc-2c963f66afa6-0") is None
    # Eight digits that are no small number: a random UUID, not a bucket.
    assert bucket_of_file_id(f"{MAX_BUCKET_NUMBER:08d}-5717-4562-b3fc-2c963f66afa6-0") is None
    assert bucket_of_file_id("12345678-5717-4562-b3fc-2c963f66afa6-0") is None
    assert bucket_of_file_id("00000001") is None


def test_a_table_is_bucketed_when_all_its_file_groups_are_buckets() -> None:
    buckets = [bucket_file_id(b) for b in range(4)]
    assert is_bucket_layout(buckets)
    assert not is_bucket_layout([*buckets, "3fa85f64-5717-4562-b3fc-2c963f66afa6-0"])
    assert not is_bucket_layout([])
