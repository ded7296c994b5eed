"""Tables Apache Hudi writes as test inputs, kept in the judge's cache (`client.cache_root()`).

Hudi's writes are the slowest part of the judge tests that only need Hudi's tables as inputs;
those tables depend only on the code that writes them and on the Hudi release. A recipe's key is
a digest of the files that decide the tables (the test module, the frames and options it uses,
the judge's server and session settings) and the Hudi versions: any change to them writes the
tables again. Each test run reads a fresh copy, so tests may change their tables.
"""

from __future__ import annotations

import hashlib
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from tests.helpers.fixtures import cache_lock
from tests.judge.client import SERVER, HudiVersion, cache_root

#: Files every recipe depends on: how Hudi is driven, and the rows and options the tests build.
_JUDGE_FILES = (
    SERVER,
    *(Path(__file__).with_name(f"{name}.py") for name in ("client", "conftest", "tables")),
    *(Path(__file__).with_name(f"{name}.py") for name in ("agreement", "compare")),
)


def _key(name: str, sources: Iterable[Path], versions: Iterable[HudiVersion]) -> str:
    digest = hashlib.sha256(name.encode())
    for source in (*_JUDGE_FILES, *sources):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    for version in versions:
        digest.update(repr(version).encode())
    return f"{name}-{digest.hexdigest()[:16]}"


def hudi_written(
    name: str,
    sources: Iterable[Path],
    versions: Iterable[HudiVersion],
    build: Callable[[Path], None],
    into: Path,
) -> Path:
    """`into`, holding the tables `build(into)` writes: built once per key, then copied from the
    cache. `sources` are the files besides the judge's own that decide what `build` writes."""
    root = cache_root() / "tables"
    entry = root / _key(name, sources, versions)
    with cache_lock(root / f".{name}.lock"):
        if not entry.is_dir():
            build(into)
            staging = root / f".staging-{uuid.uuid4().hex}"
            shutil.copytree(into, staging)
            for stale in root.glob(f"{name}-*"):  # an older key of this recipe
                shutil.rmtree(stale, ignore_errors=True)
            staging.rename(entry)
            return into
    shutil.copytree(entry, into, dirs_exist_ok=True)
    return into
