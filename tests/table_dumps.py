"""Stores written by earlier versions, kept as JSON dumps of their tables (``{table: {"columns",
"rows"}}``) so a test can rebuild one and check it still loads and resumes."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

__all__ = ["insert_rows"]


def insert_rows(conn: sqlite3.Connection, dump: Mapping[str, Mapping[str, Any]]) -> None:
    """Insert every table's rows of ``dump`` through ``conn`` (not committed)."""
    for table, content in dump.items():
        columns = content["columns"]
        marks = ", ".join("?" for _ in columns)
        conn.executemany(
            f"INSERT INTO {table}({', '.join(columns)}) VALUES ({marks})", content["rows"]
        )
