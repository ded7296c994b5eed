"""A SparkSession set up for Apache Hudi's Spark bundle (its SQL extension, catalog and Kryo
registrator, as Hudi's quickstart sets them) is refused by pyhudi's first call, which names the
settings to remove, before Spark fails on classes pyhudi does not ship."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import pyhudi
    from pyhudi.spark.session import local_session
    try:
        spark = local_session("hudi-bundle-settings", conf={
            "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
            "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
            "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        })
        pyhudi.register(spark)
    except pyhudi.ConfigError as err:
        print("REFUSED", err)
    """
)


@pytest.mark.spark
def test_hudi_bundle_session_is_refused_naming_the_settings(tmp_path):  # type: ignore[no-untyped-def]
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("REFUSED")), None)
    assert line is not None, done.stdout + done.stderr[-3000:]
    for setting in (
        "spark.sql.extensions=org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "spark.sql.catalog.spark_catalog=org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        "spark.kryo.registrator=org.apache.spark.HoodieSparkKryoRegistrar",
    ):
        assert setting in line
    assert "docs/migrating.md" in line
