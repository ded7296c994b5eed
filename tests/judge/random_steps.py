"""Seeded random step sequences for the Hudi-as-model tests (`test_random_sequences.py`).

A sequence is a `Setup` (table version, table type, index, payload or merge mode, metadata
table, CDC) and a list of steps: writes of every operation (with soft deletes, hard deletes,
stale, tied and null ordering values, some with inline table services), MERGE INTO, UPDATE,
DELETE FROM, and standalone table services. Steps hold their rows, so a printed list of steps
(Python literals) replays as it ran.

The generator keeps to what Apache Hudi runs (restrictions named where they are made): inserts
and bulk inserts write keys never written before (an insert of a stored key writes a duplicate
in Hudi, by design); a key's partition never changes; no two rows of a batch share a key and an
ordering value (which one Hudi keeps is then arbitrary); null ordering values only in writes of
base files (Hudi 0.15 fails an upsert of one, and its read of a log record holding one), and on
table version 6 only (Hudi 1.2 fails to merge an update with one).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

#: Partition values; a key's partition is fixed by its number (`partition_of`).
PARTITIONS = ("a", "b", "c")
#: Keys drawn from k000 ... k199.
KEY_COUNT = 200
V6_PAYLOADS = ("OverwriteWithLatestAvroPayload", "DefaultHoodieRecordPayload")
V9_MERGE_MODES = ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING")
INDEXES = ("SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "BUCKET", "RECORD_INDEX")
CDC_MODES = ("op_key_only", "data_before", "data_before_after")
SERVICES = ("compaction", "clustering", "clean", "archive")

#: A row: (id, ts, val, num, _hoodie_is_deleted); its partition is `partition_of(id)`.
Row = tuple[str, "int | None", str, "int | None", bool]
#: A MERGE source row: (op, id, ts, val, num); op U (update), P (partial update: val and ts),
#: D (delete), I (insert), X (no clause takes it).
SourceRow = tuple[str, str, int, str, "int | None"]


def partition_of(key: str) -> str:
    return PARTITIONS[int(key[1:]) % len(PARTITIONS)]


@dataclass(frozen=True)
class Setup:
    """What a seed draws for its tables. `merge` is the payload class (table version 6) or the
    merge mode (version 9); `cdc` the supplemental logging mode, None without CDC."""

    version: int
    table_type: str
    index: str
    merge: str
    metadata: bool
    cdc: str | None = None
    buckets: int = 2

    @property
    def mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def event_time(self) -> bool:
        return self.merge in ("DefaultHoodieRecordPayload", "EVENT_TIME_ORDERING")


@dataclass(frozen=True)
class Write:
    """A write with Hudi's data source / `pyhudi.write`: `operation`, its rows, the partitions
    `delete_partition` deletes, and the inline services its options turn on."""

    operation: str
    rows: tuple[Row, ...]
    partitions: tuple[str, ...] = ()
    inline: tuple[str, ...] = ()
    by: str = "hudi"  # who writes the step on the alternating table


@dataclass(frozen=True)
class Merge:
    """MERGE INTO the table USING the source rows ON the key (clauses: `MERGE_CLAUSES`)."""

    rows: tuple[SourceRow, ...]
    via: str = "sql"  # pyhudi's side: "sql" (pyhudi.sql) or "api" (HudiTable.merge)
    by: str = "hudi"


@dataclass(frozen=True)
class Update:
    """UPDATE the table SET val = concat(val, '+<tag>'), num = num + 1 WHERE `where`."""

    where: str
    tag: str
    via: str = "sql"
    by: str = "hudi"


@dataclass(frozen=True)
class DeleteWhere:
    """DELETE FROM the table WHERE `where`."""

    where: str
    via: str = "sql"
    by: str = "hudi"


@dataclass(frozen=True)
class Service:
    """A standalone table service: Hudi through its CALL procedure; pyhudi through `HudiTable`
    (`via="api"`) or its CALL procedure (`via="sql"`, where pyhudi has one)."""

    name: str
    via: str = "api"
    by: str = "hudi"


Step = Write | Merge | Update | DeleteWhere | Service


#: Known pyhudi differences a long run may steer around, to look for new ones
#: (`PYHUDI_RANDOM_KNOWN`, comma-separated; none by default):
#: * `bucket-sql`: `pyhudi.sql` DML on a bucket index table (both engines are given the index
#:   options with SET): pyhudi's side runs the statement through `HudiTable` instead;
#: * `mor-log-order`: merge-on-read under OverwriteWithLatestAvroPayload (table version 6), where
#:   Hudi 0.15's log scan compares ordering values between log records: that payload is not drawn
#:   for merge-on-read;
#: * `merge-stale`: MERGE INTO's stale matched updates on version 6 merge-on-read tables under
#:   OverwriteWithLatestAvroPayload (Hudi 0.15 lets one win over a base-file row but not over a
#:   newer log record; pyhudi drops them, as copy-on-write does: docs/dml.md): MERGE sources
#:   carry ordering values above every value written before;
#: * `merge-deleted`: MERGE INTO sources on version 6 merge-on-read tables name no key written and
#:   gone since (Hudi 0.15 brings such a row back when a log file deleted it: docs/dml.md);
#: * `ro-layout`: the read-optimized query compared across tables (`random_runs.py`).
KNOWN = frozenset(filter(None, os.environ.get("PYHUDI_RANDOM_KNOWN", "").split(",")))


def draw_setup(rng: random.Random, version: int) -> Setup:
    index = rng.choice(INDEXES)
    merge = rng.choice(V6_PAYLOADS if version == 6 else V9_MERGE_MODES)
    metadata = index == "RECORD_INDEX" or rng.random() < 0.6
    cdc = rng.choice(CDC_MODES) if rng.random() < 0.35 else None
    table_type = rng.choice(("COPY_ON_WRITE", "MERGE_ON_READ"))
    if "mor-log-order" in KNOWN and table_type == "MERGE_ON_READ" and version == 6:
        merge = "DefaultHoodieRecordPayload"
    return Setup(version, table_type, index, merge, metadata, cdc, rng.choice((1, 2, 4)))


@dataclass
class _Keys:
    """What the generator knows of the table's keys: those ever written (the rest are fresh)
    and, roughly, those present (only used to aim updates and deletes at stored keys)."""

    rng: random.Random
    written: set[str] = field(default_factory=set)
    present: set[str] = field(default_factory=set)

    def fresh(self, count: int, partitions: tuple[str, ...] = PARTITIONS) -> list[str]:
        pool = [
            k
            for k in (f"k{i:03d}" for i in range(KEY_COUNT))
            if k not in self.written and partition_of(k) in partitions
        ]
        return sorted(self.rng.sample(pool, min(count, len(pool))))

    def stored(
        self, count: int, partitions: tuple[str, ...] = PARTITIONS, *, gone: bool = True
    ) -> list[str]:
        """Mostly present keys, some written and gone since (unless `gone` is off)."""
        present = sorted(k for k in self.present if partition_of(k) in partitions)
        chosen = self.rng.sample(present, min(len(present), count))
        if gone:
            removed = sorted(
                k for k in self.written - self.present if partition_of(k) in partitions
            )
            chosen += self.rng.sample(removed, min(len(removed), max(1, count // 8)))
        return sorted(set(chosen))


class Generator:
    """Draws the steps of one seed."""

    def __init__(self, seed: int, setup: Setup) -> None:
        self.rng = random.Random(seed * 7919 + setup.version)
        self.setup = setup
        self.keys = _Keys(self.rng)

    # -- values ---------------------------------------------------------------------------------

    def _ts(self, nulls: bool = False) -> int | None:
        # Hudi 1.2 fails merging an update with a stored null ordering value (EVENT_TIME_ORDERING:
        # "Integer cannot be cast to class java.lang.Long"; a MERGE under COMMIT_TIME_ORDERING:
        # "Long cannot be cast to class java.lang.Integer"): nulls on table version 6 only.
        if nulls and self.setup.version == 6 and self.rng.random() < 0.1:
            return None
        return self.rng.randint(0, 12)  # a narrow range: ties and stale values are common

    def _num(self) -> int | None:
        return None if self.rng.random() < 0.1 else self.rng.randint(0, 99)

    def _rows(self, keys: list[str], step: int, *, nulls: bool = False) -> list[Row]:
        return [(k, self._ts(nulls), f"{step}.{i}", self._num(), False) for i, k in enumerate(keys)]

    def _upsert_rows(self, step: int) -> list[Row]:
        keys = self.keys.stored(self.rng.randint(8, 40)) + self.keys.fresh(self.rng.randint(0, 8))
        rows = []
        for i, key in enumerate(keys):
            deleted = self.rng.random() < 0.12  # soft deletes
            rows.append((key, self._ts(), f"{step}.{i}", self._num(), deleted))
        if self.setup.merge != "COMMIT_TIME_ORDERING":  # duplicates of distinct ordering values
            for key, ts, val, num, deleted in self.rng.sample(rows, len(rows) // 8):
                assert ts is not None
                other = self.rng.choice([t for t in range(0, 13) if t != ts])
                rows.append((key, other, val + "d", num, deleted and self.rng.random() < 0.5))
        return rows

    # -- steps ----------------------------------------------------------------------------------

    def kinds(self) -> list[str]:
        kinds = ["upsert", "insert", "delete", "insert_overwrite", "insert_overwrite_table"]
        kinds += ["delete_partition", "merge", "update", "delete_where", "clean", "archive"]
        if self.setup.index != "BUCKET":
            # Hudi 1.2 refuses to cluster a simple bucket index table ("not compatible with
            # table layout HoodieSimpleBucketLayout"); Hudi 1.2's bulk_insert into a bucket
            # table's existing buckets adds a second file group per bucket, and its next write
            # fails ("Find multiple files at partition path=... that belong to the same bucket").
            kinds += ["bulk_insert", "clustering"]
        if self.setup.mor:
            kinds.append("compaction")
        return kinds

    def _services(self) -> list[str]:
        return [s for s in SERVICES if s in self.kinds()]

    def steps(self, count: int) -> list[Step]:
        """`count` steps: a bulk insert, then every kind once in a random order, then kinds
        drawn at random (upserts most often)."""
        kinds = self.kinds()
        order = self.rng.sample(kinds, len(kinds))
        weights = {k: 1 for k in kinds} | {"upsert": 4, "merge": 2, "insert": 2, "delete": 2}
        weights = {k: w for k, w in weights.items() if k in kinds}
        while len(order) < count - 1:
            order.append(self.rng.choices(list(weights), list(weights.values()))[0])
        steps: list[Step] = [self._write("bulk_insert", 0)]
        for number, kind in enumerate(order[: count - 1], start=1):
            steps.append(self._step(kind, number))
        return steps

    def _by(self) -> str:
        return self.rng.choice(("hudi", "pyhudi"))

    def _via(self) -> str:
        via = self.rng.choice(("sql", "api"))
        return "api" if "bucket-sql" in KNOWN and self.setup.index == "BUCKET" else via

    def _step(self, kind: str, number: int) -> Step:
        if kind in SERVICES:
            via = self._via() if kind != "archive" else "api"  # pyhudi has no archive CALL
            return Service(kind, via, self._by())
        if kind == "merge":
            return self._merge(number)
        if kind == "update":
            return Update(self._where(), f"u{number}", self._via(), self._by())
        if kind == "delete_where":
            return DeleteWhere(self._where(), self._via(), self._by())
        return self._write(kind, number)

    def _write(self, operation: str, step: int) -> Write:
        partitions: tuple[str, ...] = ()
        if operation == "bulk_insert":
            rows = self._rows(self.keys.fresh(80 if step == 0 else 20), step, nulls=True)
        elif operation == "insert":
            rows = self._rows(self.keys.fresh(self.rng.randint(5, 25)), step)
        elif operation == "upsert":
            rows = self._upsert_rows(step)
        elif operation == "delete":
            keys = self.keys.stored(self.rng.randint(4, 20)) + self.keys.fresh(1)
            rows = self._rows(keys, step)
        elif operation == "insert_overwrite":
            partitions = tuple(sorted(self.rng.sample(PARTITIONS, self.rng.randint(1, 2))))
            keys = self.keys.stored(10, partitions) + self.keys.fresh(8, partitions)
            rows, partitions = self._rows(sorted(set(keys)), step, nulls=True), ()
        elif operation == "insert_overwrite_table":
            keys = self.keys.stored(20) + self.keys.fresh(10)
            rows = self._rows(sorted(set(keys)), step, nulls=True)
        else:
            assert operation == "delete_partition"
            partitions = (self.rng.choice(PARTITIONS),)
            key = next(
                f"k{i:03d}" for i in range(KEY_COUNT) if partition_of(f"k{i:03d}") in partitions
            )
            rows = self._rows([key], step)
        self._track(operation, rows, partitions)
        inline: tuple[str, ...] = ()
        if operation != "bulk_insert" and self.rng.random() < 0.3:
            inline = (self.rng.choice(self._services()),)
        return Write(operation, tuple(rows), partitions, inline, self._by())

    def _track(self, operation: str, rows: list[Row], partitions: tuple[str, ...]) -> None:
        keys = {r[0] for r in rows}
        if operation == "delete":
            self.keys.present -= keys
        elif operation == "delete_partition":
            self.keys.present = {k for k in self.keys.present if partition_of(k) not in partitions}
        else:
            if operation == "insert_overwrite_table":
                self.keys.present = set()
            elif operation == "insert_overwrite":
                touched = {partition_of(k) for k in keys}
                self.keys.present = {k for k in self.keys.present if partition_of(k) not in touched}
            self.keys.present |= {r[0] for r in rows if not r[4]}
            self.keys.present -= {r[0] for r in rows if r[4]}
        self.keys.written |= keys

    def _merge(self, step: int) -> Merge:
        ops = "UUUPDDX" if not self.setup.mor else "UUUDDX"  # Hudi 0.15: no partial MOR update
        rows: list[SourceRow] = []
        # `merge-deleted`: Hudi 0.15's MERGE on merge-on-read matches keys deleted in log files
        gone = not ("merge-deleted" in KNOWN and self.setup.mor and self.setup.version == 6)
        # Hudi 0.15 and 1.2 treat a row matching no key but hashed to a bucket with a file group
        # as matched on merge-on-read (docs/dml.md): such tables get no unmatched source rows
        unmatched = not (self.setup.mor and self.setup.index == "BUCKET")
        stored = self.keys.stored(self.rng.randint(6, 24), gone=gone and unmatched)
        for i, key in enumerate(stored):
            rows.append((self.rng.choice(ops), key, self._merge_ts(), f"{step}.{i}", self._num()))
        for i, key in enumerate(self.keys.fresh(self.rng.randint(0, 8) if unmatched else 0)):
            op = "I" if self.rng.random() < 0.85 else "X"
            rows.append((op, key, self._merge_ts(), f"{step}.i{i}", self._num()))
        for op, key, *_ in rows:
            if op == "I" or (self.setup.cdc is not None and key not in self.keys.present):
                self.keys.present.add(key)  # inserted (`MERGE_CLAUSES`: on CDC tables, any op)
            elif op == "D":
                self.keys.present.discard(key)
            self.keys.written.add(key)
        return Merge(tuple(sorted(rows, key=lambda r: r[1])), self._via(), self._by())

    def _merge_ts(self) -> int:
        """A MERGE source's ordering value (`merge-stale` in KNOWN: above every written one)."""
        ts = self._ts()
        assert ts is not None
        return ts + 13 if "merge-stale" in KNOWN else ts

    def _where(self) -> str:
        """A predicate over stored rows; rows with a null ordering value are left out (Hudi 0.15
        fails writing them back: "Ordering value is null")."""
        shape = self.rng.randrange(3)
        if shape == 0:
            where = f"num % {self.rng.randint(3, 7)} = {self.rng.randint(0, 2)}"
        elif shape == 1:
            keys = self.keys.stored(self.rng.randint(2, 10))
            where = "id IN (" + ", ".join(f"'{k}'" for k in keys) + ")"
        else:
            where = f"part = '{self.rng.choice(PARTITIONS)}' AND num < {self.rng.randint(10, 60)}"
        return f"{where} AND ts IS NOT NULL"


def generate(seed: int, version: int, count: int) -> tuple[Setup, list[Step]]:
    """The setup and `count` steps of `seed` for table version `version` (6 or 9)."""
    setup = draw_setup(random.Random(seed * 104729 + version), version)
    return setup, Generator(seed, setup).steps(count)


__all__ = ["DeleteWhere", "Merge", "Service", "Setup", "Update", "Write", "generate"]
