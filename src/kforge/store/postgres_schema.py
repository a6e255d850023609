"""Versioned schema migrations for the PostgreSQL store, applied in order when a store opens.
They define every table, the run log's and the passage store's: the stores import them, never
the other way. The passage store's tables (``PASSAGE_VERSIONS``) are made at a database's first
use of a corpus, so a database that only holds runs has none of them.

The step transaction is one server-side function, ``kforge_commit``, so a step costs one round
trip: it checks the log position and the lease, appends the frames, the step delta and the
snapshot, updates the run, and notifies listeners of the run's new last seq.
"""

from __future__ import annotations

from typing import Any

from kforge.errors import StoreError

__all__ = [
    "BASE_LEVEL",
    "CONCATENATE",
    "FRAMES_CHANNEL",
    "MIGRATIONS",
    "PASSAGE_VERSIONS",
    "SKIP",
    "VERSIONS_IN_FORCE",
    "apply_migrations",
    "is_current",
    "versions_of",
]

FRAMES_CHANNEL = "kforge_frames"
"""The LISTEN/NOTIFY channel; each notice's payload is ``RUN_ID SEQ`` (the run's last seq)."""

PASSAGE_TABLES = (
    """
    CREATE TABLE search_indexes (
        id serial PRIMARY KEY,
        name text NOT NULL UNIQUE,
        passages bigint NOT NULL DEFAULT 0,
        terms bigint NOT NULL DEFAULT 0,
        chars bigint NOT NULL DEFAULT 0
    )
    """,
    """
    CREATE TABLE search_sources (
        index_id integer NOT NULL,
        key text NOT NULL,
        title_word text NOT NULL,
        meta text NOT NULL,
        PRIMARY KEY (index_id, key)
    )
    """,
    "CREATE INDEX search_sources_title ON search_sources(index_id, title_word)",
    """
    CREATE TABLE search_passages (
        id bigserial PRIMARY KEY,
        index_id integer NOT NULL,
        passage text NOT NULL,
        source text NOT NULL,
        ordinal integer NOT NULL,
        length integer NOT NULL,
        chars integer NOT NULL,
        terms text NOT NULL,
        data text NOT NULL
    )
    """,
    "CREATE UNIQUE INDEX search_passages_id ON search_passages(index_id, passage)",
    "CREATE INDEX search_passages_source ON search_passages(index_id, source, ordinal)",
    """
    CREATE TABLE search_terms (
        index_id integer NOT NULL,
        term text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (index_id, term)
    )
    """,
    # postings carry their passage's length, so scoring reads no other row; an index-only
    # scan over (index_id, term) INCLUDE (...) reads a term's postings in one range
    """
    CREATE TABLE search_postings (
        index_id integer NOT NULL,
        term text NOT NULL,
        passage bigint NOT NULL,
        tf integer NOT NULL,
        length integer NOT NULL,
        PRIMARY KEY (index_id, term, passage) INCLUDE (tf, length)
    )
    """,
)
"""Migration 3: the passage store's tables (``kforge.store.postgres_passages``; its postings
table became blocks in migration 4)."""

SKIP = 128
"""Records between two entries of a block's skip list (a stretch is 1 or 2 KB): the stride of
``kforge_skips``, which migration 5 creates in the database, and so of every block's skip list
(``kforge.store.postgres_postings`` writes and ``postgres_search`` reads them with it)."""

BLOCK_TABLES = (
    """
    CREATE TABLE search_blocks (
        id bigserial,
        index_id integer NOT NULL,
        term text NOT NULL,
        level smallint NOT NULL,
        wide boolean NOT NULL,
        postings integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (index_id, term, id)
    )
    """,
    # blocks are read whole and compress little: out of line, uncompressed, read as they lie
    "ALTER TABLE search_blocks ALTER COLUMN data SET STORAGE EXTERNAL",
    """
    CREATE TABLE search_tombstones (
        index_id integer NOT NULL,
        passage bigint NOT NULL,
        terms text NOT NULL,
        PRIMARY KEY (index_id, passage)
    )
    """,
    # the postings table of migration 3, packed per term (a term's rows in passage order)
    """
    INSERT INTO search_blocks(index_id, term, level, wide, postings, data)
    SELECT index_id, term, 32767, wide, count(*),  -- BASE_LEVEL
           string_agg(CASE WHEN wide THEN int8send(passage) || int4send(tf) || int4send(length)
                      ELSE int4send(passage::int) || int2send(tf::smallint)
                           || int2send(length::smallint) END, ''::bytea ORDER BY passage)
    FROM (SELECT *, passage > 2147483647 OR tf > 32767 OR length > 32767 AS wide
          FROM search_postings) p
    GROUP BY index_id, term, wide
    """,
    "DROP TABLE search_postings",
    # how many writes added a block of the term since its base block (``merge``)
    "ALTER TABLE search_terms ADD COLUMN writes integer NOT NULL DEFAULT 0",
)
"""Migration 4 of the PostgreSQL schema: postings as blocks (``kforge.store.postgres_postings``)."""

_SKIPS_SQL = f"""
CREATE FUNCTION kforge_skips(data bytea, wide boolean) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(substring(data FROM i * c.step + 1 FOR c.size), ''::bytea
                               ORDER BY i), ''::bytea)
    FROM (SELECT CASE WHEN wide THEN 16 ELSE 8 END * {SKIP} AS step,
                 CASE WHEN wide THEN 8 ELSE 4 END AS size) c,
         generate_series(0, (length(data) - 1) / c.step) AS i
$$
"""

SKIP_LISTS = (
    # the skip list of a block whose records are in passage order: the passage of every
    # SKIP-th record
    _SKIPS_SQL,
    "ALTER TABLE search_blocks ADD COLUMN skips bytea NOT NULL DEFAULT ''",
    # a level-0 block holds one write's postings, in passage order; merges concatenated blocks
    # in write order, which writers of one index at once can interleave, and purges wrote
    # records in the order the server returned them: those blocks keep an empty skip list
    # (read whole) until ``rewrite`` puts them in order (``PassageIndex.settle_index``)
    "UPDATE search_blocks SET skips = kforge_skips(data, wide) WHERE level = 0",
)
"""Migration 5 of the PostgreSQL schema: blocks in passage order with skip lists."""

PEAKS = (
    # NULL: not known (the term's postings were written before peaks were kept)
    "ALTER TABLE search_terms ADD COLUMN peaks jsonb",
)
"""Migration 6 of the PostgreSQL schema: each term's peaks (``kforge.store.postgres_peaks``)."""

SNAPSHOTS_INLINE = (
    # a run's state is JSON that compresses about tenfold: kept compressed in the row (out of
    # line only when even that does not fit a page), a resume reads it without the TOAST
    # table's index and pages, and the versions a run leaves behind are pruned with the page
    # instead of waiting for a vacuum of the TOAST table
    "ALTER TABLE snapshots ALTER COLUMN state SET STORAGE MAIN",
)
"""Migration 7 of the PostgreSQL schema: snapshots in the table's own pages."""

BASE_LEVEL = 32767
"""The level of a term's base block, which writes never merge (``postgres_postings``)."""

CONCATENATE = """
WITH gone AS (
    DELETE FROM search_blocks WHERE {which}
    RETURNING index_id, term, wide, postings, data, skips
), parts AS (
    SELECT index_id, term, wide, postings, data, skips <> ''::bytea AS ordered,
           substring(data FROM 1 FOR s.size) AS first,
           substring(data FROM length(data) - 2 * s.size + 1 FOR s.size) AS last
    FROM gone, LATERAL (SELECT CASE WHEN wide THEN 8 ELSE 4 END AS size) s
), runs AS (
    SELECT *, lag(last) OVER (PARTITION BY index_id, term, wide ORDER BY first) AS before
    FROM parts
), merged AS (
    SELECT index_id, term, wide, sum(postings) AS n,
           string_agg(data, ''::bytea ORDER BY first) AS d,
           bool_and(ordered AND (before IS NULL OR before < first)) AS ordered
    FROM runs GROUP BY index_id, term, wide
)
INSERT INTO search_blocks(index_id, term, level, wide, postings, data, skips)
SELECT index_id, term, {level}, wide, n, d,
       CASE WHEN ordered THEN kforge_skips(d, wide) ELSE ''::bytea END
FROM merged
"""
"""Blocks (those ``which`` names) concatenated into one at ``level`` per term and record width,
in the order of their first passages: in passage order, with a skip list, when each block is
and ends before the next begins (else with an empty one: read whole until ``rewrite`` in
``postgres_postings`` puts it in order)."""

GATHERED = (
    # a search pays for every block of a term (a lookup on the server, a read and its planning
    # on the client), so each term's blocks become one per record width
    CONCATENATE.format(
        which="(index_id, term) IN (SELECT index_id, term FROM search_blocks "
        "GROUP BY index_id, term HAVING count(*) > count(DISTINCT wide))",
        level=BASE_LEVEL,
    ),
    # a term left with base blocks alone counts its writes from 0 again
    f"""
    UPDATE search_terms t SET writes = 0 WHERE writes <> 0 AND NOT EXISTS (
        SELECT FROM search_blocks b
        WHERE b.index_id = t.index_id AND b.term = t.term AND b.level <> {BASE_LEVEL})
    """,
)
"""Migration 8 of the PostgreSQL schema: each term's blocks gathered into one per record width
(``PassageIndex.settle_index`` keeps them few after)."""

_COMMIT_FUNCTION = (
    """
CREATE OR REPLACE FUNCTION kforge_commit(
    p_run text, p_seqs integer[], p_types text[], p_data BODY[],
    p_step integer, p_step_seq integer, p_delta BODY, p_delta_crc bigint,
    p_snap_step integer, p_snap_seq integer, p_state text, p_state_crc bigint,
    p_fields jsonb, p_updated timestamptz,
    p_owner text, p_takeover text, p_ttl double precision, p_release boolean,
    p_now double precision
) RETURNS TABLE (outcome text, last integer, holder text, expires double precision)
LANGUAGE plpgsql AS $$
DECLARE
    n integer := coalesce(array_length(p_seqs, 1), 0);
    has_fields boolean := p_fields <> '{}'::jsonb;
BEGIN
    UPDATE runs SET
        status = CASE WHEN p_fields ? 'status' THEN p_fields->>'status' ELSE status END,
        iteration = CASE WHEN p_fields ? 'iteration'
            THEN (p_fields->>'iteration')::integer ELSE iteration END,
        max_iterations = CASE WHEN p_fields ? 'max_iterations'
            THEN (p_fields->>'max_iterations')::integer ELSE max_iterations END,
        pause_reason = CASE WHEN p_fields ? 'pause_reason'
            THEN p_fields->>'pause_reason' ELSE pause_reason END,
        pending_interaction = CASE WHEN p_fields ? 'pending_interaction'
            THEN p_fields->>'pending_interaction' ELSE pending_interaction END,
        result = CASE WHEN p_fields ? 'result' THEN p_fields->>'result' ELSE result END,
        error = CASE WHEN p_fields ? 'error' THEN p_fields->>'error' ELSE error END,
        input = CASE WHEN p_fields ? 'input' THEN p_fields->>'input' ELSE input END,
        updated_at = CASE WHEN has_fields THEN p_updated ELSE updated_at END,
        last_seq = CASE WHEN n > 0 THEN p_seqs[n] ELSE last_seq END,
        lease_owner = CASE WHEN p_owner IS NULL THEN lease_owner
            WHEN p_release THEN NULL ELSE p_owner END,
        lease_expires_at = CASE WHEN p_owner IS NULL THEN lease_expires_at
            WHEN p_release THEN NULL ELSE p_now + p_ttl END,
        heartbeat_at = CASE WHEN p_owner IS NULL THEN heartbeat_at ELSE p_now END
    WHERE id = p_run
        AND (n = 0 OR last_seq = p_seqs[1] - 1)
        AND (p_owner IS NULL OR lease_owner IS NULL
             OR lease_owner IN (p_owner, coalesce(p_takeover, p_owner))
             OR lease_expires_at < p_now)
    RETURNING runs.last_seq INTO last;
    IF NOT FOUND THEN
        SELECT runs.last_seq, runs.lease_owner, runs.lease_expires_at
            INTO last, holder, expires FROM runs WHERE id = p_run;
        outcome := CASE WHEN NOT FOUND THEN 'missing'
            WHEN n > 0 AND last <> p_seqs[1] - 1 THEN 'seq' ELSE 'leased' END;
        RETURN NEXT;
        RETURN;
    END IF;
    IF n > 0 THEN
        INSERT INTO frames(run_id, seq, type, data)
            SELECT p_run, s, t, d FROM unnest(p_seqs, p_types, p_data) AS u(s, t, d);
    END IF;
    IF p_step IS NOT NULL THEN
        INSERT INTO steps(run_id, step, seq, delta, checksum)
            VALUES (p_run, p_step, p_step_seq, p_delta, p_delta_crc)
            ON CONFLICT (run_id, step) DO UPDATE
            SET seq = EXCLUDED.seq, delta = EXCLUDED.delta, checksum = EXCLUDED.checksum;
    END IF;
    IF p_snap_step IS NOT NULL THEN
        INSERT INTO snapshots(run_id, step, seq, state, checksum)
            VALUES (p_run, p_snap_step, p_snap_seq, p_state, p_state_crc)
            ON CONFLICT (run_id) DO UPDATE
            SET step = EXCLUDED.step, seq = EXCLUDED.seq, state = EXCLUDED.state,
                checksum = EXCLUDED.checksum;
    END IF;
    IF n > 0 OR has_fields THEN
        PERFORM pg_notify('"""
    + FRAMES_CHANNEL
    + """', p_run || ' ' || last);
    END IF;
    outcome := 'ok';
    RETURN NEXT;
END;
$$
"""
)

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """
            CREATE TABLE runs (
                id text PRIMARY KEY,
                ord bigserial NOT NULL,
                agent_type text NOT NULL,
                status text NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                input text NOT NULL,
                session_id text,
                parent_id text,
                iteration integer NOT NULL DEFAULT 0,
                max_iterations integer NOT NULL DEFAULT 0,
                pause_reason text,
                pending_interaction text,
                result text,
                error text,
                forked_from text,
                forked_at_seq integer,
                last_seq integer NOT NULL DEFAULT 0,
                lease_owner text,
                lease_expires_at double precision,
                heartbeat_at double precision
            )
            """,
            "CREATE INDEX runs_status ON runs(status)",
            "CREATE INDEX runs_parent ON runs(parent_id)",
            "CREATE INDEX runs_session ON runs(session_id)",
            "CREATE INDEX runs_created ON runs(created_at DESC, ord DESC)",
            """
            CREATE TABLE frames (
                run_id text NOT NULL,
                seq integer NOT NULL,
                type text NOT NULL,
                data text NOT NULL,
                PRIMARY KEY (run_id, seq)
            )
            """,
            """
            CREATE TABLE steps (
                run_id text NOT NULL,
                step integer NOT NULL,
                seq integer NOT NULL,
                delta text NOT NULL,
                checksum bigint,
                PRIMARY KEY (run_id, step)
            )
            """,
            """
            CREATE TABLE snapshots (
                run_id text PRIMARY KEY,
                step integer NOT NULL,
                seq integer NOT NULL,
                state text NOT NULL,
                checksum bigint
            )
            """,
            """
            CREATE TABLE docs (
                namespace text NOT NULL,
                key text NOT NULL,
                value text NOT NULL,
                updated_at text NOT NULL,
                PRIMARY KEY (namespace, key)
            )
            """,
            _COMMIT_FUNCTION.replace("BODY", "text"),
        ),
    ),
    (
        2,
        (
            # frame bodies and step deltas as packed bytes (kforge.store.packing); the text
            # already stored becomes its UTF-8 bytes, which read back as they are
            "ALTER TABLE frames ALTER COLUMN data TYPE bytea USING convert_to(data, 'UTF8')",
            "ALTER TABLE steps ALTER COLUMN delta TYPE bytea USING convert_to(delta, 'UTF8')",
            # most runs have no parent and no session: those need no index entry
            "DROP INDEX runs_parent",
            "CREATE INDEX runs_parent ON runs(parent_id) WHERE parent_id IS NOT NULL",
            "DROP INDEX runs_session",
            "CREATE INDEX runs_session ON runs(session_id) WHERE session_id IS NOT NULL",
            "DROP FUNCTION kforge_commit(text, integer[], text[], text[], integer, integer, "
            "text, bigint, integer, integer, text, bigint, jsonb, timestamptz, text, text, "
            "double precision, boolean, double precision)",
            _COMMIT_FUNCTION.replace("BODY", "bytea"),
        ),
    ),
    (3, PASSAGE_TABLES),  # the passage index (kforge.store.postgres_passages)
    (4, BLOCK_TABLES),  # its postings packed per term
    (5, SKIP_LISTS),  # the blocks in passage order with skip lists
    (6, PEAKS),  # each term's peaks, which bound its share of a score
    (7, SNAPSHOTS_INLINE),  # a snapshot's state compressed in its own row
    (8, GATHERED),  # each term's blocks gathered into one
    # no table changes: it marks a database whose passage tables may be missing (made at its
    # first use of a corpus, PASSAGE_VERSIONS), which an older kforge, that would apply the
    # passage migrations over tables that are not there, refuses as newer than it knows
    (9, ()),
)


PASSAGE_VERSIONS = frozenset({3, 4, 5, 6, 8})
"""The migrations of the passage store's tables: a database gets them at its first use of a
corpus (``apply_migrations(conn, passages=True)``), so one that only holds runs has none of
them. A database that has the first of them takes every later one with the run log's."""


VERSIONS_IN_FORCE = "SELECT array_agg(version) FROM kforge_schema_version"
"""The migrations a database records (one row, an array or NULL); an error where it records
none yet."""


def versions_of(row: Any) -> set[int]:
    """The versions in the row ``VERSIONS_IN_FORCE`` returns."""
    return set() if row is None or row[0] is None else {int(v) for v in row[0]}


def is_current(applied: set[int] | None, *, passages: bool = False) -> bool:
    """Whether a database that records the migrations ``applied`` (None: none yet) needs none
    applied (``apply_migrations``'s ``passages``)."""
    latest = MIGRATIONS[-1][0]
    return (
        applied is not None
        and max(applied, default=0) <= latest
        and not _missing(applied, passages)
    )


def _versions_in_force(conn: Any) -> set[int] | None:
    """The migrations the database records, None when it records none yet. A migration is
    recorded in the transaction that applies it."""
    import psycopg

    try:
        row = conn.execute(VERSIONS_IN_FORCE).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    return versions_of(row)


def _missing(applied: set[int], passages: bool) -> list[tuple[int, tuple[str, ...]]]:
    """The migrations to apply, in order: the passage store's only when ``passages`` or when
    the database already has its tables."""
    with_passages = passages or min(PASSAGE_VERSIONS) in applied
    return [
        (version, statements)
        for version, statements in MIGRATIONS
        if version not in applied and (with_passages or version not in PASSAGE_VERSIONS)
    ]


_LOCK_KEY = 0x6B666F726765  # "kforge": serialises migrations of processes opening one database


def apply_migrations(conn: Any, *, passages: bool = False) -> int:
    """Bring the schema up to date on a ``psycopg.Connection`` in autocommit mode, with the
    passage store's tables when ``passages`` (else only if the database has them already);
    returns the latest version now in force. Processes opening the same database at once
    migrate it once."""
    latest = MIGRATIONS[-1][0]
    if is_current(_versions_in_force(conn), passages=passages):
        return latest  # the usual open: one round trip, no lock
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS kforge_schema_version (version integer NOT NULL)")
        applied = _versions_in_force(conn) or set()
        current = max(applied, default=0)
        if current > latest:
            raise StoreError(
                f"database schema version {current} is newer than this kforge knows ({latest}); "
                "upgrade kforge or use another database"
            )
        for version, statements in _missing(applied, passages):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO kforge_schema_version(version) VALUES (%s)", (version,))
            current = max(current, version)
    return current
