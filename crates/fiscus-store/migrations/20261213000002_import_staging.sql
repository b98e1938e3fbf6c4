-- Where a large import's rows land before its transaction takes them (issue 34): on PostgreSQL a file's
-- rows arrive by COPY … FROM STDIN on a connection of their own, then the import's one transaction inserts
-- them into their table in one set-based statement and deletes them from here. Rows of an import that
-- failed between the two are swept by age (`staged_at`). Generic text columns: every dataset table's values
-- are TEXT or BIGINT and are cast where they are inserted. PostgreSQL makes the table UNLOGGED at start
-- (it holds nothing that must survive a crash); SQLite never uses it (its rows are inserted directly).
CREATE TABLE import_staging (
    batch     TEXT NOT NULL,
    staged_at BIGINT NOT NULL,
    c0  TEXT, c1  TEXT, c2  TEXT, c3  TEXT, c4  TEXT, c5  TEXT, c6  TEXT, c7  TEXT,
    c8  TEXT, c9  TEXT, c10 TEXT, c11 TEXT, c12 TEXT, c13 TEXT, c14 TEXT, c15 TEXT
);
CREATE INDEX import_staging_batch ON import_staging (batch);
