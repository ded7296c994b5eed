"""S3 configured the way Spark users configure it: only the session's S3A keys
(`spark.hadoop.fs.s3a.*`), no `AWS_*` variable anywhere in the process. pyhudi's own reads and
writes (pyarrow, obstore's conditional writes, executors included) reach the bucket through those
keys, and the secret key is printed nowhere and stored in no object of the table."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import boto3

from tests.conftest import S3_URL
from tests.helpers.s3 import ACCESS_KEY, s3a_jars

#: A writer process with a session of its own: S3A's keys only, per bucket for the endpoint and
#: globally for the rest, an endpoint without a scheme (`connection.ssl.enabled=false` makes it
#: http), and a secret key of its own (moto takes any).
WRITER = """
import json, sys
import pyhudi
from pyhudi.spark.session import local_session
from tests.helpers.builders import df_of, trips, trips_options

table, bucket, host, access, secret, jars = sys.argv[1:7]
s3a = {
    f"fs.s3a.bucket.{bucket}.endpoint": host,
    "fs.s3a.connection.ssl.enabled": "false",
    "fs.s3a.path.style.access": "true",
    "fs.s3a.endpoint.region": "us-east-1",
    "fs.s3a.access.key": access,
    "fs.s3a.secret.key": secret,
    "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
}
conf = {"spark.jars": jars, "spark.sql.shuffle.partitions": "2"}
conf.update({f"spark.hadoop.{key}": value for key, value in s3a.items()})
spark = local_session("s3a-conf-only", cores=2, conf=conf)
options = {**trips_options("conf_only"), "hoodie.metadata.enable": "true"}
pyhudi.write(df_of(spark, trips(0, 20)), table, {**options, "hoodie.datasource.write.operation": "bulk_insert"})
pyhudi.write(df_of(spark, trips(10, 20, ts=2)), table, {**options, "hoodie.datasource.write.operation": "upsert"})
pyhudi.write(df_of(spark, trips(0, 5)), table, {**options, "hoodie.datasource.write.operation": "delete"})
rows = pyhudi.read(spark, table).count()
arrow_rows = pyhudi.read_arrow(table).num_rows
instants = [i.action for i in pyhudi.HudiTable(table).commits()]
print(json.dumps({"rows": rows, "arrow_rows": arrow_rows, "instants": instants}))
"""


def test_pyhudi_reaches_s3_through_the_sessions_s3a_keys_alone(s3_server, bucket):
    name = bucket.removeprefix("s3://")
    table = f"{bucket}/trips"
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    host = S3_URL.removeprefix("http://")
    argv = [table, name, host, ACCESS_KEY, secret, ",".join(s3a_jars())]
    done = subprocess.run(
        [sys.executable, "-c", WRITER, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=os.getcwd(),
    )
    assert done.returncode == 0, done.stderr[-4000:]
    import json

    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {
        "rows": 25,
        "arrow_rows": 25,
        "instants": ["commit", "commit", "commit"],
    }
    assert secret not in done.stdout and secret not in done.stderr
    client = boto3.client("s3", endpoint_url=s3_server.url)
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=name)
    keys = [item["Key"] for page in pages for item in page.get("Contents", [])]
    assert any(key.endswith(".commit") for key in keys)
    for key in keys:
        body = client.get_object(Bucket=name, Key=key)["Body"].read()
        assert secret.encode() not in body, key
