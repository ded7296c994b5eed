"""A class-data-sharing (CDS) archive of the classes a Spark driver loads, for the tests' JVMs.

A JVM that maps the archive skips loading and verifying those classes: measured on 2 cores, a
local Spark session's start and first job took 4.5 s of CPU instead of 9.5 s. The suite starts
dozens of Spark JVMs (the process tests' children, the deployments' daemons and executors), so
`JDK_JAVA_OPTIONS` names the archive for every JVM the tests start (`jvm_options`).

The archive is built once per machine, outside the repository (`$PYHUDI_JVM_ARCHIVE_CACHE`,
else `~/.cache/pyhudi/jvm`), keyed by the Java runtime and pyspark's jars, by a background process
(`start_building`) that runs a small pyhudi write and read on a local session with
`-XX:ArchiveClassesAtExit`: JVMs started before it is there run without it, as do JVMs whose class
path does not begin with Spark's (the Hudi judges' pyspark, the launcher): the JVM checks the
archive against its class path and jars and ignores it when they differ (its warning is off).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyspark

from tests.helpers.fixtures import TEST_JVM_OPTIONS

#: The JVM's own messages about the archive (a class it skips, an archive that does not match the
#: class path) would go to every test process's output.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
_REPO = Path(__file__).resolve().parents[2]
_BUILDERS: list[subprocess.Popen[bytes]] = []


def cache_dir() -> Path:
    configured = os.environ.get("PYHUDI_JVM_ARCHIVE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pyhudi" / "jvm"


def archive_path() -> Path:
    """The archive for this Java runtime and this pyspark's jars (their names, sizes, times)."""
    java = subprocess.run(
        ["java", "-version"], capture_output=True, text=True, check=False
    ).stderr.strip()
    jars = Path(pyspark.__file__).parent / "jars"
    listing = sorted(
        f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in jars.glob("*.jar")
    )
    key = hashlib.sha256("\n".join([java, str(jars), *listing]).encode()).hexdigest()[:16]
    return cache_dir() / f"spark-{pyspark.__version__}-{key}.jsa"


def jvm_options(archive: Path) -> str:
    """The tests' JVM options, mapping `archive` when it exists when a JVM starts."""
    return f"{TEST_JVM_OPTIONS} -XX:SharedArchiveFile={archive} {_QUIET}"


def start_building(archive: Path) -> None:
    """Build `archive` in a background process unless it exists or another process builds it."""
    if archive.exists() or _building(archive):
        return
    env = {**os.environ, "JDK_JAVA_OPTIONS": TEST_JVM_OPTIONS}
    _BUILDERS.append(  # kept: a Popen collected while its process runs warns
        subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.jvm_archive", str(archive)],
            cwd=_REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    )


def _lock_file(archive: Path) -> Path:
    return archive.with_suffix(".lock")


@contextlib.contextmanager
def _build_lock(archive: Path) -> Iterator[bool]:
    """Whether this process holds the archive's build lock (released on leaving)."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(_lock_file(archive), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _building(archive: Path) -> bool:
    with _build_lock(archive) as free:
        return not free


def build(archive: Path) -> None:
    """Run the workload with `-XX:ArchiveClassesAtExit` and move the archive into place."""
    with _build_lock(archive) as free:
        if not free or archive.exists():
            return  # another process builds it, or built it
        partial = archive.with_suffix(f".{os.getpid()}.partial")
        try:
            _workload(f"{TEST_JVM_OPTIONS} -XX:ArchiveClassesAtExit={partial} {_QUIET}")
            if partial.exists():
                os.replace(partial, archive)
        finally:
            partial.unlink(missing_ok=True)


def _workload(java_options: str) -> None:
    """A pyhudi write (copy-on-write and merge-on-read) and read on a local session: the classes
    of the session's start, Spark SQL's planning and code generation, Parquet and Arrow."""
    import pyhudi
    from pyhudi.spark.session import local_session

    spark = local_session(
        "pyhudi-jvm-archive",
        cores=2,
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
            "spark.driver.extraJavaOptions": java_options,
        },
    )
    try:
        frame = spark.createDataFrame(
            [(i, i % 3, f"p{i % 2}") for i in range(20)], "id int, ts int, part string"
        )
        with tempfile.TemporaryDirectory() as tmp:
            for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
                path = f"{tmp}/{table_type}"
                options = {
                    "hoodie.table.name": "archive",
                    "hoodie.datasource.write.table.type": table_type,
                    "hoodie.datasource.write.recordkey.field": "id",
                    "hoodie.datasource.write.partitionpath.field": "part",
                    "hoodie.datasource.write.precombine.field": "ts",
                }
                for _ in range(2):
                    pyhudi.write(frame, path, options)
                pyhudi.read(spark, path).collect()
    finally:
        process = spark.sparkContext._gateway.proc  # type: ignore[union-attr]
        spark.stop()
        # The JVM writes the archive as it exits, which it does when its stdin closes.
        process.stdin.close()
        process.wait(timeout=300)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
