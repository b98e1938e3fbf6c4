-- The portfolio book: portfolios, their tax lots and cash, imported as ledger kinds of the data plane
-- (`fiscus import portfolios|lots|positions|cash`) and, later, moved by settled investment orders. A
-- position is not stored: it is the sum of an instrument's open lots. Quantities are integer micro-units
-- (one share = 1,000,000) and money integer minor units, so the book sums exactly.
--
-- Rows from imports belong to the workspace and are read in both environments (`environment` NULL); rows
-- a settlement writes carry the environment whose action settled, so a sandbox trade never moves the book
-- production reads.

-- `datasets.kind` gains the book's four kinds. SQLite cannot alter a CHECK, so the table is rebuilt the
-- portable way (new table, copy, drop, rename), which PostgreSQL runs as well; nothing references it.
CREATE TABLE datasets_next (
    id               TEXT PRIMARY KEY,
    number           BIGINT NOT NULL UNIQUE,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    kind             TEXT NOT NULL CHECK (kind IN ('instruments', 'prices', 'corporate_actions', 'fundamentals',
                         'economics', 'ledgers', 'entities', 'journals', 'transactions', 'balances',
                         'portfolios', 'lots', 'positions', 'cash')),
    name             TEXT NOT NULL,
    version          BIGINT NOT NULL,
    source           TEXT NOT NULL,
    licence          TEXT NOT NULL,
    provenance       TEXT NOT NULL CHECK (provenance IN ('observed', 'synthetic')),
    file_name        TEXT NOT NULL,
    file_sha256      TEXT NOT NULL,
    row_count        BIGINT NOT NULL,
    skipped_count    BIGINT NOT NULL,
    period_start     TEXT,
    period_end       TEXT,
    importer_version TEXT NOT NULL,
    mapping          TEXT NOT NULL,
    content_hash     TEXT NOT NULL,
    imported_by      TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    seal_mac         TEXT,
    UNIQUE (workspace_id, kind, name, version),
    UNIQUE (workspace_id, kind, file_sha256)
);
INSERT INTO datasets_next (id, number, workspace_id, kind, name, version, source, licence, provenance, file_name,
    file_sha256, row_count, skipped_count, period_start, period_end, importer_version, mapping, content_hash,
    imported_by, created_at, seal_mac)
SELECT id, number, workspace_id, kind, name, version, source, licence, provenance, file_name, file_sha256,
    row_count, skipped_count, period_start, period_end, importer_version, mapping, content_hash, imported_by,
    created_at, seal_mac FROM datasets;
DROP TABLE datasets;
ALTER TABLE datasets_next RENAME TO datasets;
CREATE INDEX datasets_by_workspace ON datasets (workspace_id, number);

INSERT INTO data_counters (name, value) VALUES ('portfolios', 0);

CREATE TABLE portfolios (
    id               BIGINT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    code             TEXT NOT NULL,
    name             TEXT NOT NULL,
    base_currency    TEXT NOT NULL,
    benchmark_symbol TEXT,
    fingerprint      TEXT NOT NULL,
    dataset_number   BIGINT NOT NULL,
    UNIQUE (workspace_id, code)
);
CREATE INDEX portfolios_by_workspace ON portfolios (workspace_id, id);
CREATE INDEX portfolios_by_dataset ON portfolios (dataset_number);

CREATE TABLE tax_lots (
    workspace_id    TEXT NOT NULL,
    id              TEXT NOT NULL,
    portfolio_id    BIGINT NOT NULL,
    lot             TEXT NOT NULL,
    instrument_id   TEXT NOT NULL,
    acquired        TEXT NOT NULL,
    quantity_micros BIGINT NOT NULL CHECK (quantity_micros > 0),
    cost_minor      BIGINT NOT NULL CHECK (cost_minor >= 0),
    currency        TEXT NOT NULL,
    origin          TEXT NOT NULL CHECK (origin IN ('lot', 'position', 'trade')),
    environment     TEXT,
    fingerprint     TEXT NOT NULL,
    dataset_number  BIGINT,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, portfolio_id, lot)
);
CREATE INDEX tax_lots_by_portfolio ON tax_lots (workspace_id, portfolio_id, instrument_id, acquired);
CREATE INDEX tax_lots_by_dataset ON tax_lots (dataset_number);

-- What a sale closed of a lot; a lot's open quantity is its quantity less its disposals.
CREATE TABLE lot_disposals (
    workspace_id    TEXT NOT NULL,
    id              TEXT NOT NULL,
    lot_id          TEXT NOT NULL,
    portfolio_id    BIGINT NOT NULL,
    disposed        TEXT NOT NULL,
    quantity_micros BIGINT NOT NULL CHECK (quantity_micros > 0),
    cost_minor      BIGINT NOT NULL,
    proceeds_minor  BIGINT NOT NULL,
    term            TEXT NOT NULL CHECK (term IN ('short', 'long')),
    environment     TEXT,
    source          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX lot_disposals_by_lot ON lot_disposals (workspace_id, lot_id);

CREATE TABLE portfolio_cash (
    workspace_id   TEXT NOT NULL,
    id             TEXT NOT NULL,
    portfolio_id   BIGINT NOT NULL,
    entry          TEXT NOT NULL,
    date           TEXT NOT NULL,
    amount_minor   BIGINT NOT NULL,
    currency       TEXT NOT NULL,
    description    TEXT NOT NULL,
    environment    TEXT,
    fingerprint    TEXT NOT NULL,
    dataset_number BIGINT,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, portfolio_id, entry)
);
CREATE INDEX portfolio_cash_by_portfolio ON portfolio_cash (workspace_id, portfolio_id, currency);
CREATE INDEX portfolio_cash_by_dataset ON portfolio_cash (dataset_number);

-- Sealed investment records: what an investment operation proposed or measured (a tax-loss harvest, a
-- scenario run, a construction, a collateral snapshot, a risk-compliance run, a report, ...), its request
-- and output as canonical JSON, and the SHA-256 over both. Never updated.
CREATE TABLE investment_records (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    kind         TEXT NOT NULL,
    portfolio_id BIGINT,
    request      TEXT NOT NULL,
    output       TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);
CREATE INDEX investment_records_by_kind ON investment_records (workspace_id, environment, kind, id);
