"""A real S3-compatible endpoint for the tests, and Spark's S3A for pyspark's Hadoop.

* `MotoServer`: moto's server mode (`python -m moto.server`) on 127.0.0.1, in its own process.
  It enforces S3's conditional writes (`If-None-Match: *`), as S3 does.
* `s3a_jars()`: `hadoop-aws` at the Hadoop version pyspark ships (or the one named: the Hudi
  judges' pyspark 3.5 ships Hadoop 3.3.4), with the AWS SDK modules S3A needs (not the SDK bundle:
  700 MB of SDK v2 for Hadoop 3.4+, 280 MB of SDK v1 for Hadoop 3.3), fetched from Maven Central by
  `mvn` on first use and cached in `~/.cache/pyhudi/s3a` (outside the repository, so fresh clones
  reuse it).

The credentials are moto's fixed test keys: nothing here reaches AWS.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.fixtures import cache_lock

CACHE = Path(os.environ.get("PYHUDI_TEST_CACHE", Path.home() / ".cache" / "pyhudi"))
ACCESS_KEY = "testing"
SECRET_KEY = "testing-secret"
REGION = "us-east-1"

#: Jars Spark already ships (a second copy on the class path would shadow Spark's): pyspark 3.5
#: and 4 both ship these, at versions at least those hadoop-project manages (Jackson 2.15 / 2.21
#: over 2.12.7, joda-time 2.12 / 2.14 over 2.9.9, httpclient 4.5.14 over 4.5.13, ...).
_SPARK_PROVIDES = (
    "io.netty,org.slf4j,org.apache.httpcomponents,commons-codec,commons-logging,"
    "com.fasterxml.jackson.core,joda-time"
)

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.apache.hadoop</groupId><artifactId>hadoop-project</artifactId>
    <version>{hadoop}</version><relativePath/>
  </parent>
  <groupId>pyhudi.tests</groupId><artifactId>s3a</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.hadoop</groupId><artifactId>hadoop-aws</artifactId>
      <exclusions>
        <exclusion><groupId>{sdk.group}</groupId><artifactId>{sdk.bundle}</artifactId></exclusion>
      </exclusions>
    </dependency>
    {modules}
  </dependencies>
</project>
"""


@dataclass(frozen=True)
class _AwsSdk:
    """The AWS SDK one hadoop-aws line is built on: the bundle it depends on, and the modules of
    that SDK S3A needs instead (their versions: the property hadoop-project manages them with)."""

    group: str
    bundle: str
    modules: tuple[str, ...]
    version_property: str


#: Hadoop 3.4+ (pyspark 4): SDK v2. S3A's client factory and transfers need `s3`,
#: `s3-transfer-manager`; `sts` for its assumed-role and session credentials.
_SDK_V2 = _AwsSdk(
    "software.amazon.awssdk",
    "bundle",
    ("s3", "s3-transfer-manager", "sts"),
    "aws-java-sdk-v2.version",
)
#: Hadoop 3.3 (pyspark 3.5, the Hudi judges): SDK v1. `aws-java-sdk-s3` brings `-core`, `-kms` and
#: `jmespath-java`; `-dynamodb` (S3Guard's store) too: S3AFileSystem.initialize names its
#: AmazonDynamoDBException even with S3Guard off, and fails with NoClassDefFoundError without it.
_SDK_V1 = _AwsSdk(
    "com.amazonaws",
    "aws-java-sdk-bundle",
    ("aws-java-sdk-s3", "aws-java-sdk-dynamodb"),
    "aws-java-sdk.version",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def pyspark_hadoop_version() -> str:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    (api,) = jars.glob("hadoop-client-api-*.jar")
    return api.stem.removeprefix("hadoop-client-api-")


def s3a_jars(hadoop: str | None = None) -> list[str]:
    """The jars that give a Spark on Hadoop `hadoop` (default: pyspark's) the `s3a` file system
    (fetched once, then cached)."""
    hadoop = hadoop or pyspark_hadoop_version()
    folder = CACHE / "s3a" / hadoop
    done = folder / ".complete"
    with cache_lock(
        folder.parent / ".fetch.lock"
    ):  # xdist workers start their sessions at the same time
        if not done.exists():
            _fetch(hadoop, folder)
            done.touch()
    return sorted(str(p) for p in (folder / "jars").glob("*.jar"))


def _fetch(hadoop: str, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "pom.xml").write_text(_pom(hadoop))
    _copy_dependencies(folder, f"hadoop-aws {hadoop}")


def _pom(hadoop: str) -> str:
    major, minor = (int(part) for part in hadoop.split(".")[:2])
    sdk = _SDK_V1 if (major, minor) < (3, 4) else _SDK_V2
    modules = "\n    ".join(
        f"<dependency><groupId>{sdk.group}</groupId><artifactId>{m}</artifactId>"
        f"<version>${{{sdk.version_property}}}</version></dependency>"
        for m in sdk.modules
    )
    return _POM.format(hadoop=hadoop, sdk=sdk, modules=modules)


#: hudi-aws's DynamoDB lock for a Hudi release (only 0.15.0's `hudi-aws` is on Maven Central
#: here; no `hudi-aws-bundle`, no 1.x `hudi-aws`): the jar, AWS's lock client, and the AWS SDK v2
#: DynamoDB client at the versions Hudi's POM names; what Spark ships is left out.
_HUDI_AWS_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pyhudi.tests</groupId><artifactId>hudi-aws-lock</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.hudi</groupId><artifactId>hudi-aws</artifactId><version>{hudi}</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
    <dependency>
      <groupId>com.amazonaws</groupId><artifactId>dynamodb-lock-client</artifactId>
      <version>{lock_client}</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
    <dependency>
      <groupId>software.amazon.awssdk</groupId><artifactId>dynamodb</artifactId>
      <version>{sdk}</version>
      <exclusions>
        <exclusion><groupId>software.amazon.awssdk</groupId><artifactId>netty-nio-client</artifactId></exclusion>
      </exclusions>
    </dependency>
  </dependencies>
</project>
"""
#: Hudi release -> (dynamodb-lock-client, AWS SDK v2) versions of its POM.
_HUDI_AWS_VERSIONS = {"0.15.0": ("1.2.0", "2.18.40")}
HUDI_AWS_RELEASES = frozenset(_HUDI_AWS_VERSIONS)


def hudi_aws_jars(hudi: str) -> list[str]:
    """The jars that give Hudi `hudi` its `DynamoDBBasedLockProvider` (fetched once, cached)."""
    lock_client, sdk = _HUDI_AWS_VERSIONS[hudi]
    folder = CACHE / "hudi-aws" / hudi
    with cache_lock(folder.parent / ".fetch.lock"):
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            pom = _HUDI_AWS_POM.format(hudi=hudi, lock_client=lock_client, sdk=sdk)
            (folder / "pom.xml").write_text(pom)
            _copy_dependencies(folder, f"hudi-aws {hudi}")
            (folder / ".complete").touch()
    return sorted(str(p) for p in (folder / "jars").glob("*.jar"))


def _copy_dependencies(folder: Path, what: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(f"Apache Maven (mvn) is needed to fetch {what} for the S3 tests")
    command = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(folder / "pom.xml"),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={folder / 'jars'}",
        f"-DexcludeGroupIds={_SPARK_PROVIDES}",
        f"-Dmaven.repo.local={CACHE / 'maven'}",
    ]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"fetching {what} failed:\n{run.stdout}{run.stderr}")


def _die_with_parent() -> None:
    """In the child: SIGTERM when the test process dies (a killed run leaves no server behind)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass(frozen=True)
class MotoServer:
    """An S3 endpoint at `url` (path-style addressing, plain HTTP)."""

    url: str
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, port: int, log: Path) -> MotoServer:
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        with open(log, "ab") as out:
            process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
            )
        server = cls(f"http://127.0.0.1:{port}", process)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(server.url + "/moto-api/data.json", timeout=2).close()
                return server
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    server.stop()
                    raise RuntimeError(f"moto's S3 server did not start; its log: {log}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def environment(self) -> dict[str, str]:
        return environment(self.url)

    def s3a_conf(self) -> dict[str, str]:
        return s3a_conf(self.url)


def environment(url: str) -> dict[str, str]:
    """How pyarrow, boto3, obstore and hudi-rs users point at the endpoint `url`."""
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ENDPOINT_URL": url,
        "AWS_ALLOW_HTTP": "true",
    }


def s3a_conf(url: str) -> dict[str, str]:
    """The Spark conf of S3A at the endpoint `url`, with `s3://` mapped to S3A (as on EMR)."""
    hadoop = {
        "fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "fs.s3a.endpoint": url,
        "fs.s3a.endpoint.region": REGION,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": ACCESS_KEY,
        "fs.s3a.secret.key": SECRET_KEY,
        "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }
    return {f"spark.hadoop.{k}": v for k, v in hadoop.items()}
