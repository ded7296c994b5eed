"""A Hudi user's program runs unchanged on pyhudi: `quickstart_program.run` (Hudi's quickstart,
DataFrame API, streaming and SQL) runs in Apache Hudi 0.15's own session and in a pyhudi session
whose only change is `pyhudi.register(spark)`; every result is the same, and Hudi reads each
table pyhudi wrote as it reads its own."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

import pyhudi
from tests.judge import quickstart_program
from tests.judge.client import Judge

TABLES = ("trips", "streamed", "sql_trips")


def test_hudis_quickstart_program_runs_unchanged(
    spark: SparkSession, hudi_0_15: Judge, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    source = Path(quickstart_program.__file__).read_text()
    hudi_base, ours = str(tmp_path / "hudi"), str(tmp_path / "pyhudi")
    theirs = hudi_0_15.run(source + "\nresult = run(spark, base)\n", base=hudi_base)
    pyhudi.register(spark)
    mine = json.loads(json.dumps(quickstart_program.run(spark, ours), default=str))
    for name in theirs:
        assert mine[name] == theirs[name], name
    assert set(mine) == set(theirs)
    columns = quickstart_program.COLUMNS
    for table in TABLES:
        read = {
            base: sorted(
                spark.read.parquet(str(hudi_0_15.read(f"{base}/{table}")))
                .select(*columns)
                .collect()
            )
            for base in (hudi_base, ours)
        }
        assert read[ours] == read[hudi_base], table
