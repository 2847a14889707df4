"""Turn measured rows into sorted, typed tables and write/read them as CSV and Parquet."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from measure.schema import TABLES, Table


def frame(table: Table, rows: list[dict]) -> pl.DataFrame:
    """A DataFrame with exactly the table's columns, types and row order."""
    # Built column by column: one list per column is far cheaper than polars' per-row dict reading.
    df = pl.DataFrame({name: [r.get(name) for r in rows] for name in table.names}, schema=table.polars_schema)
    return df.sort(list(table.sort), nulls_last=True, maintain_order=True)


def write_tables(frames: dict[str, pl.DataFrame], out_dir: str | os.PathLike) -> list[Path]:
    """Write each table as `<name>.csv` and `<name>.parquet`; returns the written paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in sorted(frames.items()):
        csv = out / f"{name}.csv"
        df.write_csv(csv, float_precision=None)
        pq = out / f"{name}.parquet"
        # No statistics: they carry nothing a reader needs and keep bytes stable.
        df.write_parquet(pq, compression="zstd", statistics=False)
        written += [csv, pq]
    return written


def read_tables(out_dir: str | os.PathLike) -> dict[str, pl.DataFrame]:
    """Read every table of a run directory (Parquet), typed by the schema."""
    out = Path(out_dir)
    frames = {}
    for name, table in TABLES.items():
        pq = out / f"{name}.parquet"
        frames[name] = pl.read_parquet(pq) if pq.exists() else pl.DataFrame(schema=table.polars_schema)
    return frames


def read_table(out_dir: str | os.PathLike, name: str) -> pl.DataFrame:
    """One table of a run directory."""
    return read_tables(out_dir)[name]
