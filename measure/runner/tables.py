"""Turn measured rows into sorted, typed tables and write/read them as CSV and Parquet."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from measure.schema import TABLES, Table


def text_cell(value: str) -> str:
    """`value` as valid UTF-8 text: a byte of a file name that is not UTF-8 (decoded by Python
    as U+DC80..U+DCFF) becomes `\\xNN`, any other lone surrogate (a JSON `\\ud83d`) U+FFFD."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return "".join((f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else "\ufffd")
                       if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)


def frame(table: Table, rows: list[dict]) -> pl.DataFrame:
    """A DataFrame with exactly the table's columns, types and row order."""
    columns = {name: [r.get(name) for r in rows] for name in table.names}
    return unsorted_frame(table, columns, len(rows)).sort(list(table.sort), nulls_last=True, maintain_order=True)


def unsorted_frame(table: Table, columns: dict[str, list], n: int, extra: dict[str, list] | None = None, without=()) -> pl.DataFrame:
    """The table's `n` rows given as `columns` (a column absent: nulls), but the columns `without`, then
    `extra` (Int64), in their order; text cells made valid UTF-8 (text_cell)."""
    schema = {name: dtype for name, dtype in table.polars_schema.items() if name not in without}
    data = {name: columns.get(name) or [None] * n for name in schema}
    for name, dtype in schema.items():
        if dtype == pl.String:
            data[name] = [v if v is None or v.isascii() else text_cell(v) for v in data[name]]
    for name, values in (extra or {}).items():
        data[name], schema[name] = values, pl.Int64
    return pl.DataFrame(data, schema=schema)


class Rows:
    """A DataFrame seen as rows (`row["col"]`, `row.get("col")`) by code written over lists of row
    dicts; a column becomes a Python list only when a row reads it."""

    def __init__(self, df: pl.DataFrame):
        self.df = df
        self._columns: dict[str, list] = {}

    def column(self, name: str) -> list:
        values = self._columns.get(name)
        if values is None:
            if name not in self.df.columns:
                raise KeyError(name)
            values = self._columns[name] = self.df[name].to_list()
        return values

    def __len__(self) -> int:
        return self.df.height

    def __iter__(self):
        return (_Row(self, i) for i in range(self.df.height))


class _Row(Mapping):
    __slots__ = ("_rows", "_i")

    def __init__(self, rows: Rows, i: int):
        self._rows, self._i = rows, i

    def __getitem__(self, key: str):
        return self._rows.column(key)[self._i]

    def __iter__(self):
        return iter(self._rows.df.columns)

    def __len__(self) -> int:
        return len(self._rows.df.columns)


CSV_UNSAFE = r"^[=+\-@\t\r]"
"""A text cell starting with = + - @ tab or CR is a formula to a spreadsheet (OWASP's CSV-injection rule)."""


def csv_safe(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with a leading `'` on each text cell CSV_UNSAFE matches, so a spreadsheet shows the cell
    instead of running it (file names are chosen by whoever wrote them). Parquet keeps the values."""
    text = [c for c, dtype in df.schema.items() if dtype == pl.String]
    return df.with_columns(pl.when(pl.col(c).str.contains(CSV_UNSAFE)).then("'" + pl.col(c)).otherwise(pl.col(c)).alias(c)
                           for c in text)


CSV_SLICE_ROWS = 100_000
"""Rows written to a CSV at a time: csv_safe copies one slice's text columns, not the whole table's
(the 20,000-session report's peak is 25 MiB lower so; the bytes are those of one write_csv)."""


def write_tables(frames: dict[str, pl.DataFrame], out_dir: str | os.PathLike) -> None:
    """Write each table as `<name>.csv` (CSV-injection safe, see csv_safe) and `<name>.parquet`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, df in sorted(frames.items()):
        csv = out / f"{name}.csv"
        if df.height <= CSV_SLICE_ROWS:  # polars writes the file itself: no Python file object per chunk
            csv_safe(df).write_csv(csv, float_precision=None)
        else:
            with open(csv, "wb") as f:
                for k, part in enumerate(df.iter_slices(CSV_SLICE_ROWS)):
                    csv_safe(part).write_csv(f, float_precision=None, include_header=k == 0)
        # No statistics: they carry nothing a reader needs and keep bytes stable.
        df.write_parquet(out / f"{name}.parquet", compression="zstd", statistics=False)


def read_tables(out_dir: str | os.PathLike) -> dict[str, pl.DataFrame]:
    """Read every table of a run directory (Parquet), typed by the schema."""
    return {name: read_table(out_dir, name) for name in TABLES}


def read_table(out_dir: str | os.PathLike, name: str) -> pl.DataFrame:
    """One table of a run directory (only that one is read); an empty one when it is absent."""
    pq = Path(out_dir) / f"{name}.parquet"
    return pl.read_parquet(pq) if pq.exists() else pl.DataFrame(schema=TABLES[name].polars_schema)
