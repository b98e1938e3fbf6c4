-- Coherence of the nodes' credential and workspace caches (fiscus_store::cache). Every transaction that
-- changes standing moves the generation; every serving node polls it, forgets its cache when it moved, and
-- acknowledges (acked) with a heartbeat; the committer returns only once every live node acknowledged.
-- SQLite (one node per file, the in-process cache is coherent by itself) creates the tables and never uses them.
CREATE TABLE cache_generation (
    id         BIGINT PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL
);
INSERT INTO cache_generation (id, generation) VALUES (1, 0);

CREATE TABLE cache_nodes (
    node_id      TEXT PRIMARY KEY,
    acked        BIGINT NOT NULL,
    -- Database clock, microseconds since the epoch.
    heartbeat_at BIGINT NOT NULL
);
