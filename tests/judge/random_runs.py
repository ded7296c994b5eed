"""One run of a random step sequence (`random_steps.py`) on three tables, with Apache Hudi as
the model: H, written by Hudi alone; P, written by pyhudi alone; A, each step written by Hudi or
pyhudi (the step's `by`). After every step Hudi's and pyhudi's snapshot reads of the three
tables must all hold H's rows as Hudi reads them; at the end, each table's read-optimized,
incremental and CDC queries must read alike through both engines, and as H's do.

A failing run stops at its first difference (`Failure`); `shrink` drops steps while the same
check still fails, and `reproduction` prints the setup and the steps as Python literals."""

from __future__ import annotations

import os
import pprint
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyhudi
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext
from tests.judge.random_engines import COLUMNS, HudiEngine, PyhudiEngine, cdc_change
from tests.judge.random_steps import KNOWN, Setup, Step

#: The tables of a run: H (Hudi's, the model), P (pyhudi's), A (alternating writers).
TABLES = ("H", "P", "A")


@dataclass
class Failure(Exception):
    """The first difference of a run: `check` names it without the step (shrinking keeps a
    candidate that fails the same check), `detail` shows the differing rows."""

    step: int
    check: str
    detail: str

    def __str__(self) -> str:
        return f"after step {self.step}: {self.check}\n{self.detail}"


class HudiBroke(Exception):
    """Hudi failed a step, or a snapshot read, of its own table H: the model ends there."""

    def __init__(self, step: int, what: str) -> None:
        super().__init__(f"after step {step}: {what}")
        self.step = step


class HudiLimitation(UserWarning):
    """Something Hudi itself cannot do on its own table: the run ends there, or the query is not
    compared."""


def _key(row: list[Any]) -> tuple[str, ...]:
    return tuple(repr(v) for v in row)


def _sorted(rows: list[list[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in sorted(rows, key=_key)]


def essence(error: str) -> str:
    """An error's message lines and causes (Java's "Caused by"), without stack frames."""
    lines = [line for line in error.splitlines() if line.strip() and not line[0].isspace()]
    causes = [line for line in lines if "Exception" in line or "Error" in line]
    return "\n".join(dict.fromkeys(causes[:12] or lines[-12:]))[:4000]


def diff_rows(ours: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]], limit: int = 8) -> str:
    """The rows of the keys where two reads differ (the record key is the first column)."""
    by_key: dict[Any, tuple[list[Any], list[Any]]] = {}
    for side, rows in enumerate((ours, theirs)):
        for row in rows:
            by_key.setdefault(row[0], ([], []))[side].append(row)
    differing = [
        k
        for k, (a, b) in sorted(by_key.items(), key=repr)
        if sorted(a, key=repr) != sorted(b, key=repr)
    ]
    lines = [f"{len(ours)} vs {len(theirs)} rows; {len(differing)} keys differ"]
    for key in differing[:limit]:
        a, b = by_key[key]
        lines.append(f"  {key}: {a or '(absent)'}\n  {' ' * len(str(key))}  vs {b or '(absent)'}")
    return "\n".join(lines)


@dataclass
class Run:
    """The three tables of one run, under `root`, and the engines writing them."""

    hudi: HudiEngine
    pyhudi: PyhudiEngine
    setup: Setup
    root: Path
    alternating: bool = True
    #: The latest completed commit of each table after each step (incremental windows).
    marks: dict[str, list[str | None]] = field(default_factory=lambda: {t: [] for t in TABLES})
    #: Seconds spent per part (PYHUDI_RANDOM_TIMING=1 prints them).
    seconds: Counter[str] = field(default_factory=Counter)

    @contextmanager
    def timed(self, what: str) -> Iterator[None]:
        began = time.monotonic()
        try:
            yield
        finally:
            self.seconds[what] += time.monotonic() - began

    def path(self, table: str) -> str:
        return str(self.root / table)

    @property
    def tables(self) -> tuple[str, ...]:
        return TABLES if self.alternating else TABLES[:2]

    def apply(self, number: int, step: Step) -> None:
        writers: list[tuple[str, Callable[[str, Step], None], str]] = [
            ("H", self.hudi.apply, "Hudi"),
            ("P", self.pyhudi.apply, "pyhudi"),
        ]
        if self.alternating:
            by = step.by
            writers.append(("A", self.hudi.apply if by == "hudi" else self.pyhudi.apply, by))
        for table, apply, who in writers:
            try:
                with self.timed(f"{who} {type(step).__name__}"):
                    apply(self.path(table), step)
            except Exception as err:
                kind = type(step).__name__ + getattr(step, "operation", getattr(step, "name", ""))
                if table == "H":
                    raise HudiBroke(
                        number, f"Hudi failed {kind} on H: {essence(str(err))}"
                    ) from err
                check = f"{who} failed {kind} on {table}: {type(err).__name__}"
                raise Failure(number, check, essence(str(err))) from err
        for table in self.tables:
            commits = pyhudi.HudiTable(self.path(table)).commits()
            last = commits[-1] if commits else None
            self.marks[table].append(last.completion_time or last.time if last else None)

    # -- reads ----------------------------------------------------------------------------------

    def _read_both(
        self,
        options: dict[str, dict[str, str]],
        columns: tuple[str, ...],
        arrow: bool,
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """(engine, table) -> the read's answer; `options`: each table's read options."""
        with self.timed("Hudi reads"):
            hudi = self.hudi.reads([(t, self.path(t), options[t], columns) for t in self.tables])
        found = {("Hudi", t): hudi[t] for t in self.tables}
        for t in self.tables:
            with self.timed("pyhudi reads" + (" (arrow)" if arrow else "")):
                found[("pyhudi", t)] = self.pyhudi.read(self.path(t), options[t], columns, arrow)
        return found

    def _everywhere(self, options: dict[str, str]) -> dict[str, dict[str, str]]:
        return {
            t: {"hoodie.metadata.enable": str(self.setup.metadata).lower(), **options}
            for t in self.tables
        }

    def check_snapshot(self, number: int, *, arrow: bool = True) -> None:
        """Snapshot reads (pyhudi's through `read_arrow` after each step: `pyhudi.read` through
        Spark costs ~20 times as much here; the end's checks use it)."""
        answers = self._read_both(self._everywhere({}), COLUMNS, arrow)
        self._compare(number, "snapshot", answers, layout_free=True)

    def _compare(
        self,
        number: int,
        query: str,
        answers: dict[tuple[str, str], dict[str, Any]],
        *,
        layout_free: bool,
        per_engine: bool = True,
        rows: Callable[[dict[str, Any]], list[tuple[Any, ...]]] | None = None,
        cross: Callable[[dict[str, Any]], list[tuple[Any, ...]]] | None = None,
    ) -> None:
        """Each table read alike by both engines; and (`layout_free`: a query whose rows do not
        depend on file layout or commit times) each table as H."""
        rows = rows or (lambda answer: _sorted(answer["rows"]))
        cross = cross or rows
        model = answers[("Hudi", "H")]
        refused = "error" in model  # Hudi cannot run the query on its own table
        if refused and query == "snapshot":
            raise HudiBroke(number, f"Hudi cannot read H: {essence(model['error'])}")
        if refused:
            what = f"after step {number}: Hudi's {query} query of H failed, not compared"
            warnings.warn(HudiLimitation(f"{what}: {essence(model['error'])}"), stacklevel=2)
        for table in self.tables:
            hudi, ours = answers[("Hudi", table)], answers[("pyhudi", table)]
            if per_engine and not (refused and "error" in hudi):
                check = f"{query}: pyhudi reads {table} as Hudi does"
                sides = f"pyhudi's read of {table} vs Hudi's"
                self._agree(number, check, sides, ours, hudi, rows)
            if table != "H" and layout_free and not refused:
                check = f"{query}: Hudi reads {table} as H"
                sides = f"Hudi's read of {table} vs Hudi's read of H"
                self._agree(number, check, sides, hudi, model, cross)

    def _agree(
        self,
        number: int,
        check: str,
        sides: str,
        ours: dict[str, Any],
        theirs: dict[str, Any],
        rows: Callable[[dict[str, Any]], list[tuple[Any, ...]]],
    ) -> None:
        if "error" in ours or "error" in theirs:
            if "error" in ours and "error" in theirs:
                return  # both refuse the query
            raise Failure(
                number,
                f"{check} (one engine failed)",
                f"{sides}:\n{ours.get('error')}\nvs\n{theirs.get('error')}",
            )
        mine, model = rows(ours), rows(theirs)
        if mine != model:
            raise Failure(number, check, f"{sides}: {diff_rows(mine, model)}")

    def check_end(self, number: int) -> None:
        """The snapshot through `pyhudi.read`, then the read-optimized, incremental and CDC
        queries; every check runs, the failures are raised together (the first names them)."""
        failures: list[Failure] = []
        for check in (
            lambda: self.check_snapshot(number, arrow=False),
            self._check_read_optimized,
            self._check_incremental,
            self._check_cdc,
        ):
            try:
                check()
            except Failure as failure:
                failures.append(failure)
        if failures:
            checks = "; ".join(f.check for f in failures)
            detail = "\n".join(f"{f.check}\n{f.detail}" for f in failures)
            raise Failure(number, checks, detail)

    def _check_read_optimized(self) -> None:
        """Each table read alike by both engines; each table as H last (its base files: the same
        only where both engines lay the files out alike)."""
        if not self.setup.mor:
            return
        number = len(self.marks["H"]) - 1
        read = self._everywhere({"hoodie.datasource.query.type": "read_optimized"})
        answers = self._read_both(read, COLUMNS, arrow=False)
        self._compare(number, "read-optimized", answers, layout_free=False)
        if "ro-layout" not in KNOWN:
            query = "read-optimized (layout)"
            self._compare(number, query, answers, layout_free=True, per_engine=False)

    def _incremental_options(self) -> dict[str, dict[str, str]]:
        everywhere = self._everywhere({"hoodie.datasource.query.type": "incremental"})
        return {t: {**options, **self._window(t)} for t, options in everywhere.items()}

    def _check_incremental(self) -> None:
        number = len(self.marks["H"]) - 1
        answers = self._read_both(self._incremental_options(), COLUMNS, arrow=False)
        self._compare(number, "incremental", answers, layout_free=True)

    def _check_cdc(self) -> None:
        if self.setup.cdc is None:
            return
        number = len(self.marks["H"]) - 1
        cdc = {
            t: {**o, "hoodie.datasource.query.incremental.format": "cdc"}
            for t, o in self._incremental_options().items()
        }
        answers = self._read_both(cdc, (), arrow=True)
        # Hudi 0.15 prints one record of a group a replace commit removed for each of its records
        # (a reused row object, fixed in 1.2): at version 6 such changes agree in op and count.
        replaced = self._replace_instants() if self.setup.version == 6 else set()

        def changes(answer: dict[str, Any], with_time: bool) -> list[tuple[Any, ...]]:
            named = [dict(zip(answer["columns"], r)) for r in answer["rows"]]
            found = []
            for row in named:
                change = cdc_change(row, with_time)
                if row["op"] == "d" and row["ts_ms"] in replaced:
                    change = (None, row["ts_ms"], "d") if with_time else (None, "d")
                found.append(change)
            return sorted(found, key=repr)

        self._compare(
            number,
            "cdc",
            answers,
            layout_free=True,
            rows=lambda a: changes(a, True),
            cross=lambda a: changes(a, False),
        )

    def _replace_instants(self) -> set[str]:
        """The completed replace commits of every table (instant times)."""
        found: set[str] = set()
        for table in self.tables:
            timeline = TableContext.open(self.path(table)).active.timeline
            found |= {i.time for i in timeline.completed() if i.action is Action.REPLACE_COMMIT}
        return found

    def _window(self, table: str) -> dict[str, str]:
        """The last three steps' commits (begin exclusive, end inclusive)."""
        marks = self.marks[table]
        begin = marks[-4] if len(marks) >= 4 and marks[-4] else "000"
        end = marks[-1] or "000"
        return {
            "hoodie.datasource.read.begin.instanttime": begin,
            "hoodie.datasource.read.end.instanttime": end,
        }


def run_sequence(
    hudi: HudiEngine,
    ours: PyhudiEngine,
    setup: Setup,
    steps: list[Step],
    root: Path,
    alternating: bool = True,
) -> None:
    """Apply `steps`, checking after each; raises the first `Failure`. Where Hudi fails a step
    of its own table, the run checks the end queries of the steps before and ends with a
    `HudiLimitation` warning."""
    run = Run(hudi, ours, setup, root, alternating)
    try:
        for number, step in enumerate(steps):
            try:
                run.apply(number, step)
            except HudiBroke as broke:
                warnings.warn(HudiLimitation(f"{broke}; the run ends there"), stacklevel=2)
                if number > 0:
                    run.check_end(number - 1)
                return
            run.check_snapshot(number)
        run.check_end(len(steps) - 1)
    except HudiBroke as broke:
        warnings.warn(HudiLimitation(f"{broke}; the run ends there"), stacklevel=2)
    finally:
        if os.environ.get("PYHUDI_RANDOM_TIMING"):
            parts = ", ".join(f"{k} {v:.1f}s" for k, v in run.seconds.most_common())
            print(f"[random sequence {root.name}] {parts}", file=sys.stderr)


def shrink(
    failure: Failure,
    steps: list[Step],
    attempt: Callable[[list[Step]], Failure | None],
    budget_s: float,
) -> tuple[list[Step], Failure]:
    """Fewer steps failing the same check, within `budget_s`: the steps after the failing one
    dropped; then the first and the failing step alone; then chunks of the steps between them
    dropped, halves first, then smaller ones (delta debugging)."""
    steps = steps[: failure.step + 1]
    deadline = time.monotonic() + budget_s

    def still_fails(candidate: list[Step]) -> bool:
        nonlocal steps, failure
        found = attempt(candidate)
        if found is None or found.check != failure.check:
            return False
        steps, failure = candidate[: found.step + 1], found
        return True

    if len(steps) > 2 and time.monotonic() < deadline:
        still_fails([steps[0], steps[-1]])
    chunks = 2
    while len(steps) > 2 and time.monotonic() < deadline:
        middle = len(steps) - 2
        size = max(1, -(-middle // chunks))
        for begin in range(1, len(steps) - 1, size):
            if time.monotonic() >= deadline:
                break
            if still_fails(steps[:begin] + steps[begin + size :]):
                chunks = max(chunks - 1, 2)
                break
        else:
            if size == 1:
                break
            chunks *= 2
    return steps, failure


def reproduction(setup: Setup, steps: list[Step], failure: Failure, seed: int | None) -> str:
    """The failing sequence as Python literals (`PYHUDI_RANDOM_REPLAY` replays such a file)."""
    text = pprint.pformat(steps, width=100, compact=True)
    return (
        f"# {'replay' if seed is None else f'seed {seed}'}, {len(steps)} steps: {failure.check}\n"
        f"setup = {setup!r}\nsteps = {text}\n"
        + "".join(f"# {line}\n" for line in str(failure).splitlines())
    )


def shrink_budget_s() -> float:
    return float(os.environ.get("PYHUDI_RANDOM_SHRINK_S", "120"))
