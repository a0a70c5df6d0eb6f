//! The tables of the stores as the version before owner listing (issue #23) made them,
//! with a thread written there: a store opened on them migrates them and keeps the thread.

/// The SQLite file of the earlier version, with the thread `earlier` at version 1.
pub(crate) const SQLITE: &str = "
CREATE TABLE IF NOT EXISTS checkpoints (
    thread TEXT NOT NULL,
    version INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    written_at INTEGER NOT NULL, -- unix time, ms
    PRIMARY KEY (thread, version)
);
CREATE TABLE IF NOT EXISTS threads (
    thread TEXT PRIMARY KEY NOT NULL,
    last INTEGER NOT NULL
);
INSERT INTO checkpoints VALUES ('earlier', 1, x'6561726c696572', 0);
INSERT INTO threads VALUES ('earlier', 1);
";

/// The PostgreSQL tables and append function of the earlier version, with the thread
/// `earlier` at version 1.
pub(crate) const POSTGRES: &str = "
CREATE TABLE IF NOT EXISTS adk_checkpoints (
    thread TEXT NOT NULL,
    version BIGINT NOT NULL,
    bytes BYTEA NOT NULL,
    written_at BIGINT NOT NULL, -- unix time, ms, on the database's clock
    PRIMARY KEY (thread, version)
);
CREATE TABLE IF NOT EXISTS adk_threads (
    thread TEXT PRIMARY KEY,
    last BIGINT NOT NULL
);
-- One append, in one round trip: lock the thread's row, check its head, write. Each
-- statement of a (volatile) function reads what was committed when it starts, so the
-- head is read after the lock is held. Returns the new version, or NULL and the head
-- found when it is not the one expected.
CREATE OR REPLACE FUNCTION adk_append(p_thread TEXT, p_expected BIGINT, p_bytes BYTEA, p_ttl BIGINT)
RETURNS TABLE (appended BIGINT, found BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    v_now BIGINT := (extract(epoch from clock_timestamp()) * 1000)::bigint;
    v_last BIGINT;
    v_found BIGINT;
BEGIN
    INSERT INTO adk_threads (thread, last) VALUES (p_thread, 0) ON CONFLICT DO NOTHING;
    SELECT t.last INTO v_last FROM adk_threads t WHERE t.thread = p_thread FOR UPDATE;
    SELECT max(c.version) INTO v_found FROM adk_checkpoints c
        WHERE c.thread = p_thread AND c.written_at > v_now - p_ttl;
    IF v_found IS DISTINCT FROM p_expected THEN
        RETURN QUERY SELECT NULL::BIGINT, v_found;
        RETURN;
    END IF;
    UPDATE adk_threads SET last = v_last + 1 WHERE thread = p_thread;
    INSERT INTO adk_checkpoints (thread, version, bytes, written_at)
        VALUES (p_thread, v_last + 1, p_bytes, v_now);
    DELETE FROM adk_checkpoints c WHERE c.thread = p_thread AND c.written_at <= v_now - p_ttl;
    RETURN QUERY SELECT v_last + 1, v_found;
END
$$;
SELECT * FROM adk_append('earlier', NULL, 'earlier'::bytea, 9223372036854775807);
";
