"""Rows arriving session by session, in any order, merged into each table's sorted frame."""

from __future__ import annotations

from pathlib import Path

_POS = "__merge_position"
_SEQ = "__merge_arrival"
_RANK = "__session_rank"

SESSION_COLUMNS = ("session_id", "session_path")
"""The columns every row of a session shares (schema's leading pair): kept once per session."""


class TableBuilder:
    """One table's rows, as sessions deliver them (`add`, with each session's place in the merge order).

    `frame()` gives exactly what `tables.frame(table, rows)` gives for every session's rows concatenated
    in that order. Rows wait as Python lists until `spill()` writes them as an Arrow IPC chunk; polars
    is loaded only by `spill` and `frame`. A session's id and path are kept once, not once per row: the
    sort by session_path is a sort by the path's rank (integers, not 1,080,000 strings of budget_sweep
    at 20,000 sessions), and the sorted table's two columns point into one copy of each value.
    """

    def __init__(self, name: str, spill_dir: Path | None = None):
        self.name = name
        self.spill_dir = spill_dir
        self.columns: dict[str, list] = {}  # the waiting rows, a list per column but the session's
        self.positions: list[int] = []  # the merge position of each waiting row
        self.chunks: list[Path] = []
        self.arrived = 0  # rows so far: with the position, a sort key no two rows share
        self.sessions: dict[int, tuple[str, str]] = {}  # merge position -> its rows' (session_id, session_path)

    def add(self, position: int, table: dict[str, list]) -> None:
        """Take one session's rows, as columns (they share one session_id and session_path: the job
        builds both from one value, and the cache refuses an entry where they differ)."""
        n = len(table["session_path"])
        self.sessions[position] = tuple(table[c][0] for c in SESSION_COLUMNS)
        waiting = len(self.positions)
        for name, values in table.items():
            if name not in SESSION_COLUMNS:
                if name not in self.columns:
                    self.columns[name] = [None] * waiting
                self.columns[name].extend(values)
        self.positions.extend([position] * n)
        for column in self.columns.values():
            if len(column) < waiting + n:  # a column this session's rows lack (rare: test first, allocate only then)
                column.extend([None] * (waiting + n - len(column)))

    @property
    def table(self):
        from measure.schema import TABLES  # noqa: PLC0415 - polars (the schema's types) only here

        return TABLES[self.name]

    def _waiting(self):
        from measure.runner.tables import unsorted_frame  # noqa: PLC0415

        n = len(self.positions)
        extra = {_POS: self.positions, _SEQ: list(range(self.arrived, self.arrived + n))}
        chunk = unsorted_frame(self.table, self.columns, n, extra, without=SESSION_COLUMNS)
        self.arrived += n
        self.columns, self.positions = {}, []
        return chunk

    def spill(self) -> None:
        """Write the waiting rows as one chunk under spill_dir."""
        if not self.positions:
            return
        path = self.spill_dir / f"{self.name}-{len(self.chunks):05d}.arrow"
        self._waiting().write_ipc(path, compression="uncompressed")
        self.chunks.append(path)

    def frame(self):
        """The table, sorted as `frame` sorts it; ties keep the merge order (then each session's own)."""
        import polars as pl  # noqa: PLC0415

        if self.chunks:
            self.spill()
        spilled, self.chunks = self.chunks, []
        rows = pl.scan_ipc(spilled) if spilled else self._waiting()

        def column(name: str) -> pl.Series:  # a column at a time (Arrow IPC reads only that one)
            # Rows held in memory are read without a query: a query's fixed cost, once per column of
            # every table, was a fifth of a small run's CPU.
            return rows.select(name).collect().to_series() if spilled else rows[name]

        from measure.runner.tables import text_cell  # noqa: PLC0415

        sessions = pl.DataFrame([(pos, *map(text_cell, shared)) for pos, shared in self.sessions.items()], orient="row",
                                schema={_POS: pl.Int64, **{c: pl.String for c in SESSION_COLUMNS}})
        sessions = sessions.with_columns(pl.col("session_path").rank("dense").cast(pl.Int64).alias(_RANK))
        # (session rank, the rest of the sort key, merge position, arrival) is unique: the order is
        # `frame`'s stable one whichever algorithm sorts, and no tie needs maintain_order.
        assert self.table.sort[0] == "session_path"
        keys = [*self.table.sort[1:], _POS, _SEQ]
        order = (pl.DataFrame([column(k) for k in keys]).join(sessions.select(_POS, _RANK), on=_POS, how="left", maintain_order="left")
                 .select(pl.arg_sort_by([_RANK, *keys], nulls_last=True)).to_series())
        lead = column(_POS).gather(order).to_frame().join(sessions, on=_POS, how="left", maintain_order="left")
        # Then the table column by column, each gathered into that order: what is held is the
        # sorted table and one unsorted column, not the table twice.
        columns = [lead[name] if name in SESSION_COLUMNS else column(name).gather(order) for name in self.table.names]
        for path in spilled:
            path.unlink()
        return pl.DataFrame(columns)


class Merged:
    """Every table's builder, plus the errors, for a run: past HOLD_ROWS waiting rows (all tables
    together) every table spills them into `spill` (without one, every row waits). A root of a few
    hundred sessions never spills (nor loads polars while it measures)."""

    HOLD_ROWS = 20_000

    def __init__(self, spill: Path | None):
        self.spill = spill
        self.builders: dict[str, TableBuilder] = {}
        self.errors: dict[int, list[dict]] = {}
        self.waiting = 0

    def add(self, position: int, tables: dict[str, dict[str, list]], errors: list[dict]) -> None:
        """Take one session's tables (as columns) and errors rows."""
        for name, table in tables.items():
            n = len(table.get("session_path", ()))
            if not n:
                continue
            if name not in self.builders:
                self.builders[name] = TableBuilder(name, self.spill)
            self.builders[name].add(position, table)
            self.waiting += n
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
