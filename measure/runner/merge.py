"""Rows arriving session by session, in any order, merged into each table's sorted frame."""

from __future__ import annotations

import os
from pathlib import Path

_POS = "__merge_position"
_SEQ = "__merge_arrival"


class TableBuilder:
    """One table's rows, as sessions deliver them, and where each session stands in the merge.

    `add(position, rows)` takes one session's rows and its place in the run's merge order;
    `frame()` gives exactly what `tables.frame(table, rows)` gives for every session's rows
    concatenated in that order. Rows wait as Python dicts; `spill()` writes those waiting as an
    Arrow IPC chunk under `spill_dir`. Polars is loaded only by `spill` and `frame`, so a run
    whose rows never spill loads it once its workers are done.
    """

    def __init__(self, name: str, spill_dir: str | os.PathLike | None = None):
        self.name = name
        self.spill_dir = Path(spill_dir) if spill_dir is not None else None
        self.rows: list[dict] = []
        self.positions: list[int] = []
        self.chunks: list[Path] = []
        self.arrived = 0  # rows so far: with the position, a sort key no two rows share

    def add(self, position: int, rows: list[dict]) -> None:
        """Take one session's rows."""
        self.rows.extend(rows)
        self.positions.extend([position] * len(rows))

    @property
    def table(self):
        from measure.schema import TABLES  # noqa: PLC0415 - polars (the schema's types) only here

        return TABLES[self.name]

    def _waiting(self):
        from measure.runner.tables import unsorted_frame  # noqa: PLC0415

        n = len(self.rows)
        chunk = unsorted_frame(self.table, self.rows, {_POS: self.positions, _SEQ: list(range(self.arrived, self.arrived + n))})
        self.arrived += n
        self.rows, self.positions = [], []
        return chunk

    def spill(self) -> None:
        """Write the waiting rows as one chunk under spill_dir."""
        if not self.rows:
            return
        path = self.spill_dir / f"{self.name}-{len(self.chunks):05d}.arrow"
        self._waiting().write_ipc(path, compression="uncompressed")
        self.chunks.append(path)

    def frame(self):
        """The table, sorted as `frame` sorts it; ties keep the merge order (then each session's own)."""
        import polars as pl  # noqa: PLC0415

        # (sort key, merge position, arrival) is unique: the order is `frame`'s stable one
        # whichever algorithm sorts, and no tie needs maintain_order.
        keys = [*self.table.sort, _POS, _SEQ]
        if not self.chunks:  # nothing spilled: one frame in memory, sorted at once
            df = self._waiting()
            return df.sort(keys, nulls_last=True).drop(_POS, _SEQ)
        self.spill()
        spilled, self.chunks = self.chunks, []

        def column(names: list[str]):  # the spilled chunks read a column set at a time (Arrow IPC reads only those)
            return pl.scan_ipc(spilled).select(names).collect()

        order = column(keys).select(pl.arg_sort_by(keys, nulls_last=True)).to_series()
        # Then the table column by column, each gathered into that order: what is held is the
        # sorted table and one unsorted column, not the table twice (720,000 rows of
        # budget_sweep at 20,000 sessions).
        columns = [column([name]).to_series().gather(order) for name in self.table.names]
        for path in spilled:
            path.unlink()
        return pl.DataFrame(columns)


class Merged:
    """Every table's builder, plus the errors, for a run; rows spill when too many wait.

    Up to HOLD_ROWS rows (all tables together) wait as dicts; past that every table spills
    its waiting rows into `spill` (without one, every row waits). A root of a few hundred sessions
    never spills (and never loads polars while it measures); 20,000 sessions hold at most
    HOLD_ROWS rows' dicts at a time.
    """

    HOLD_ROWS = 20_000

    def __init__(self, spill: Path | None):
        self.spill = spill
        self.builders: dict[str, TableBuilder] = {}
        self.errors: dict[int, list[dict]] = {}
        self.waiting = 0

    def add(self, position: int, tables: dict[str, list[dict]], errors: list[dict]) -> None:
        for name, rows in tables.items():
            if not rows:
                continue
            b = self.builders.get(name)
            if b is None:
                b = self.builders[name] = TableBuilder(name, self.spill)
            b.add(position, rows)
            self.waiting += len(rows)
        if errors:
            self.errors[position] = errors
        if self.waiting > self.HOLD_ROWS and self.spill is not None:
            self.spill.mkdir(exist_ok=True)
            for b in self.builders.values():
                b.spill()
            self.waiting = 0

    def frame(self, name: str):
        """Table `name`, sorted; its builder is let go."""
        b = self.builders.pop(name, None)
        return (b or TableBuilder(name)).frame()
