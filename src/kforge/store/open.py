"""Open the store a ``--db`` value, ``KFORGE_DB`` or ``Runtime(store=...)`` names: a
``postgresql://`` URL opens the PostgreSQL store, anything else is a SQLite file. Either opens
its run log and its passage store together, each on its own connection."""

from __future__ import annotations

import os

from kforge.store.combined import Store

__all__ = ["open_store", "store_target"]


def store_target(target: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    """``target``, else ``KFORGE_DB`` when that names a PostgreSQL database (a SQLite path in
    ``KFORGE_DB`` is read by the SQLite store itself)."""
    from kforge.store.postgres_database import is_postgres_url

    if target is None and is_postgres_url(os.environ.get("KFORGE_DB", "")):
        return os.environ["KFORGE_DB"]
    return target


def open_store(
    target: str | os.PathLike[str] | None = None,
    *,
    long_lived: bool = True,
    pool_size: int | None = None,
) -> Store:
    """The store ``target`` names; a process that runs one command passes ``long_lived=False``
    (a PostgreSQL store then opens its connections without preparing for many resumes), and
    one that executes many runs at once a PostgreSQL ``pool_size`` (default 10)."""
    from kforge.store.postgres_database import is_postgres_url

    target = store_target(target)
    if is_postgres_url(target):
        from kforge.store.postgres import PostgresStore

        return PostgresStore(str(target), warm=long_lived, pool_size=pool_size or 10)
    from kforge.store.sqlite import SQLiteStore

    return SQLiteStore(target)
