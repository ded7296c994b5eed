"""Apache Hudi as the judge of pyhudi's tables: installs the Hudi versions on first use (a
virtualenv with pyspark 3.5 and Hudi's Spark bundle from Maven Central, cached outside the
repository) and drives one long-lived Hudi process per version (`tests/judge/server.py`).

The cache is `$PYHUDI_JUDGE_CACHE`, else `~/.cache/pyhudi/judge`; fresh clones reuse it. A judge
given an S3 endpoint also runs S3A (hadoop-aws at its pyspark's Hadoop: `tests/helpers/s3.py`),
with `s3://` mapped to S3A, so it reads and writes the tests' tables on S3.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers.fixtures import cache_lock
from tests.helpers.s3 import HUDI_AWS_RELEASES, hudi_aws_jars, s3a_conf, s3a_jars

SERVER = Path(__file__).with_name("server.py")
ANSWER_PREFIX = "@@judge@@ "


@dataclass(frozen=True)
class HudiVersion:
    """One judge: a Hudi release, its Spark bundle on Maven Central, the pyspark it runs on."""

    name: str
    hudi: str
    bundle: str
    pyspark: str

    @property
    def coordinates(self) -> str:
        return f"org.apache.hudi:{self.bundle}:{self.hudi}"


#: Hudi 0.15.0 is the writer of table version 6; Hudi 1.2.0 the newest 1.x release whose bundle
#: Maven Central serves here (its Spark 4 bundles and 1.2.1 are not served: Spark 3.5 bundle).
HUDI_0_15 = HudiVersion("0.15", "0.15.0", "hudi-spark3.5-bundle_2.12", "3.5.1")
HUDI_1_2 = HudiVersion("1.2", "1.2.0", "hudi-spark3.5-bundle_2.12", "3.5.1")


def cache_root() -> Path:
    configured = os.environ.get("PYHUDI_JUDGE_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pyhudi" / "judge"


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({' '.join(command)}):\n{done.stdout}\n{done.stderr}")


def install(version: HudiVersion) -> tuple[Path, Path]:
    """The judge's Python and bundle jar, installed on first use (a lock keeps concurrent test
    runs from installing twice)."""
    root = cache_root()
    with cache_lock(root / ".install.lock"):
        venv = root / f"pyspark-{version.pyspark}"
        python = venv / "bin" / "python"
        if not (venv / ".installed").exists():
            shutil.rmtree(venv, ignore_errors=True)
            _run([sys.executable, "-m", "venv", str(venv)], "creating the judge's virtualenv")
            pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            _run([*pip, f"pyspark=={version.pyspark}"], f"installing pyspark {version.pyspark}")
            (venv / ".installed").touch()
        repository = root / "maven"
        group, artifact, release = version.coordinates.split(":")
        jar = repository.joinpath(*group.split("."), artifact, release, f"{artifact}-{release}.jar")
        if not jar.exists():
            mvn = shutil.which("mvn")
            if mvn is None:
                raise RuntimeError("Apache Maven (mvn) is needed to fetch Hudi's bundle")
            command = [mvn, "-q", "-B", "dependency:get", f"-Dartifact={version.coordinates}"]
            command += ["-Dtransitive=false", f"-Dmaven.repo.local={repository}"]
            _run(command, f"fetching {version.coordinates}")
        return python, jar


def hadoop_version(python: Path) -> str:
    """The Hadoop version the judge's pyspark ships (its `hadoop-client-api` jar)."""
    venv = python.parent.parent
    (api,) = venv.glob("lib/python*/site-packages/pyspark/jars/hadoop-client-api-*.jar")
    return api.stem.removeprefix("hadoop-client-api-")


class JudgeError(AssertionError):
    """Apache Hudi failed a request: its traceback is the message."""


class Judge:
    """One running Hudi process. Requests are answered in order; `send` and `receive` split one
    request in two, so the test can act while Hudi works (concurrent writers)."""

    def __init__(
        self,
        version: HudiVersion,
        work: Path,
        conf: Mapping[str, str] | None = None,
        *,
        s3_endpoint: str | None = None,
    ) -> None:
        self.version = version
        self.work = work
        self.conf = dict(conf or {})  # Spark settings over the server's (bench: driver memory)
        self.s3_endpoint = s3_endpoint  # S3A's endpoint (moto's URL), known before Spark starts
        self._proc: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}

    def start(self, timeout_s: float = 600) -> Judge:
        python, jar = install(self.version)
        jars, conf = [str(jar)], dict(self.conf)
        if self.s3_endpoint is not None:
            jars += s3a_jars(hadoop=hadoop_version(python))
            if self.version.hudi in HUDI_AWS_RELEASES:  # the DynamoDB lock, where Maven has it
                jars += hudi_aws_jars(self.version.hudi)
            conf = {**s3a_conf(self.s3_endpoint), **conf}
        self.work.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PYSPARK_PYTHON": str(python),
            "PYSPARK_DRIVER_PYTHON": str(python),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYTHONPATH": "",
        }
        env.pop("SPARK_HOME", None)
        self._log = open(self.work / "hudi.log", "w")  # noqa: SIM115 (closed in stop)
        command = [str(python), str(SERVER), ",".join(jars), str(self.work / "warehouse")]
        command.append(json.dumps(conf))
        self._proc = subprocess.Popen(
            command,
            cwd=self.work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
        )
        self.info = self._answer(timeout_s)
        return self

    def stop(self) -> None:
        if self._proc is None:
            return
        with contextlib.suppress(Exception):
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps({"op": "stop"}) + "\n")
            self._proc.stdin.flush()
            self._proc.wait(timeout=60)
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._proc = None
        self._log.close()

    # -- the protocol ---------------------------------------------------------------------------

    def send(self, op: str, **args: Any) -> None:
        assert self._proc is not None and self._proc.stdin is not None, "the judge is not running"
        self._proc.stdin.write(json.dumps({"op": op, "args": args}) + "\n")
        self._proc.stdin.flush()

    def receive(self, timeout_s: float = 900) -> Any:
        return self._answer(timeout_s)

    def request(self, op: str, **args: Any) -> Any:
        self.send(op, **args)
        return self.receive()

    def _answer(self, timeout_s: float) -> Any:
        assert self._proc is not None and self._proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            line = self._proc.stdout.readline()
            if not line:
                raise JudgeError(f"Hudi {self.version.name} exited:\n{self.log_tail()}")
            if line.startswith(ANSWER_PREFIX):
                payload = json.loads(line[len(ANSWER_PREFIX) :])
                if not payload["ok"]:
                    raise JudgeError(f"Hudi {self.version.name}: {payload['error']}")
                return payload["result"]
        raise JudgeError(f"Hudi {self.version.name} did not answer in {timeout_s} s")

    def log_tail(self, chars: int = 6000) -> str:
        return (self.work / "hudi.log").read_text(errors="replace")[-chars:]

    # -- what tests ask -------------------------------------------------------------------------

    def write(
        self,
        path: str,
        rows: pa.Table | Any,
        options: Mapping[str, str],
        mode: str = "append",
        *,
        wait: bool = True,
    ) -> None:
        """Hudi writes `rows` (a pyarrow Table, or a Spark DataFrame of pyhudi's session) into the
        table at `path` with its data source and these options. `wait=False` returns once Hudi
        has the request: take its answer with `receive()` before asking anything else."""
        data = self._stage(rows)
        self.send("write", path=path, data=str(data), options=dict(options), mode=mode)
        if wait:
            self.receive()

    def read(self, path: str, options: Mapping[str, str] | None = None) -> Path:
        """Hudi's read of the table: the parquet folder holding its rows."""
        out = self.work / "reads" / uuid.uuid4().hex
        self.request("read", path=path, options=dict(options or {}), out=str(out))
        return out

    def sql(self, statement: str) -> list[dict[str, Any]]:
        return self.request("sql", statement=statement)  # type: ignore[no-any-return]

    def run(self, code: str, **kwargs: Any) -> Any:
        return self.request("run", code=code, **kwargs)

    def call(self, procedure: str, **args: Any) -> list[dict[str, Any]]:
        """A Hudi `CALL` procedure with named arguments (strings quoted, numbers and booleans as
        they are)."""
        listed = ", ".join(f"{name} => {_sql_literal(value)}" for name, value in args.items())
        return self.sql(f"CALL {procedure}({listed})")

    def _stage(self, rows: pa.Table | Any) -> Path:
        data = self.work / "inputs" / uuid.uuid4().hex
        if isinstance(rows, pa.Table):
            data.mkdir(parents=True)
            pq.write_table(rows, data / "part-0.parquet")
        else:
            rows.write.parquet(str(data))
        return data


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return "'" + str(value).replace("'", "\\'") + "'"
