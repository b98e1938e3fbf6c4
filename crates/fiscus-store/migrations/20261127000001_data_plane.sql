-- The data plane: datasets (sealed imports with provenance) and the rows they hold. Rows are never updated.
-- Series kinds (instruments, prices, corporate actions, fundamentals, economics) keep every version's rows,
-- each tagged with its dataset's number; reads use the newest version unless asked for another. Ledger
-- kinds (ledgers, entities, journals, transactions, balances) accumulate across imports: each of their rows
-- carries a `fingerprint` (SHA-256 of its imported values), so a row imported again unchanged is skipped and a
-- changed one is refused. Data belongs to a workspace and is served to both of its environments.

-- Integer ids the seed's paths and cursors use (datasets, general ledgers, entities, journals), taken with
-- `UPDATE … RETURNING` inside the writing transaction, which is portable and gap-free per commit.
CREATE TABLE data_counters (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO data_counters (name, value) VALUES ('datasets', 0), ('ledgers', 0), ('entities', 0), ('journals', 0);

CREATE TABLE datasets (
    id               TEXT PRIMARY KEY,
    number           BIGINT NOT NULL UNIQUE,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    kind             TEXT NOT NULL CHECK (kind IN ('instruments', 'prices', 'corporate_actions', 'fundamentals',
                         'economics', 'ledgers', 'entities', 'journals', 'transactions', 'balances')),
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
CREATE INDEX datasets_by_workspace ON datasets (workspace_id, number);

CREATE TABLE instruments (
    workspace_id TEXT NOT NULL,
    id           TEXT NOT NULL,
    symbol       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, symbol)
);

CREATE TABLE instrument_refs (
    workspace_id   TEXT NOT NULL,
    instrument_id  TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    symbol         TEXT NOT NULL,
    name           TEXT NOT NULL,
    asset_class    TEXT NOT NULL,
    currency       TEXT NOT NULL,
    exchange       TEXT NOT NULL,
    country        TEXT NOT NULL,
    sector         TEXT NOT NULL,
    isin           TEXT NOT NULL,
    PRIMARY KEY (workspace_id, instrument_id, dataset_number)
);
CREATE INDEX instrument_refs_by_dataset ON instrument_refs (dataset_number);

CREATE TABLE prices (
    workspace_id   TEXT NOT NULL,
    instrument_id  TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    date           TEXT NOT NULL,
    open           TEXT,
    high           TEXT,
    low            TEXT,
    close          TEXT,
    adj_close      TEXT,
    volume         TEXT,
    PRIMARY KEY (workspace_id, instrument_id, dataset_number, date)
);
CREATE INDEX prices_by_dataset ON prices (dataset_number);

CREATE TABLE corporate_actions (
    workspace_id   TEXT NOT NULL,
    instrument_id  TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    ex_date        TEXT NOT NULL,
    action         TEXT NOT NULL CHECK (action IN ('split', 'cash_dividend')),
    pay_date       TEXT,
    ratio          TEXT,
    amount         TEXT,
    currency       TEXT,
    PRIMARY KEY (workspace_id, instrument_id, dataset_number, ex_date, action)
);
CREATE INDEX corporate_actions_by_dataset ON corporate_actions (dataset_number);

CREATE TABLE fundamentals (
    workspace_id   TEXT NOT NULL,
    instrument_id  TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    period_end     TEXT NOT NULL,
    fiscal_period  TEXT NOT NULL,
    metric         TEXT NOT NULL,
    value          TEXT NOT NULL,
    currency       TEXT,
    PRIMARY KEY (workspace_id, instrument_id, dataset_number, period_end, fiscal_period, metric)
);
CREATE INDEX fundamentals_by_dataset ON fundamentals (dataset_number);

CREATE TABLE economic_series (
    workspace_id   TEXT NOT NULL,
    series_key     TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    title          TEXT NOT NULL,
    units          TEXT NOT NULL,
    frequency      TEXT NOT NULL,
    observations   BIGINT NOT NULL,
    first_date     TEXT,
    last_date      TEXT,
    PRIMARY KEY (workspace_id, series_key, dataset_number)
);
CREATE INDEX economic_series_by_dataset ON economic_series (dataset_number);

CREATE TABLE economic_observations (
    workspace_id   TEXT NOT NULL,
    series_key     TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    date           TEXT NOT NULL,
    value          TEXT NOT NULL,
    PRIMARY KEY (workspace_id, series_key, dataset_number, date)
);
CREATE INDEX economic_observations_by_dataset ON economic_observations (dataset_number);

CREATE TABLE general_ledgers (
    id             BIGINT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    code           TEXT NOT NULL,
    name           TEXT NOT NULL,
    currency       TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    UNIQUE (workspace_id, code)
);
CREATE INDEX general_ledgers_by_dataset ON general_ledgers (dataset_number);

CREATE TABLE finance_entities (
    id                BIGINT PRIMARY KEY,
    uid               TEXT NOT NULL UNIQUE,
    workspace_id      TEXT NOT NULL REFERENCES workspaces (id),
    code              TEXT NOT NULL,
    name              TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('active', 'inactive')),
    general_ledger_id BIGINT NOT NULL,
    currency          TEXT NOT NULL,
    country           TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    dataset_number    BIGINT NOT NULL,
    UNIQUE (workspace_id, code)
);
CREATE INDEX finance_entities_by_workspace ON finance_entities (workspace_id, id);
CREATE INDEX finance_entities_by_dataset ON finance_entities (dataset_number);

CREATE TABLE journals (
    id                BIGINT PRIMARY KEY,
    uid               TEXT NOT NULL UNIQUE,
    workspace_id      TEXT NOT NULL REFERENCES workspaces (id),
    general_ledger_id BIGINT NOT NULL,
    entity_id         BIGINT NOT NULL,
    entry             TEXT NOT NULL,
    posting_date      TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('posted')),
    fingerprint TEXT NOT NULL,
    dataset_number    BIGINT NOT NULL,
    UNIQUE (workspace_id, general_ledger_id, entry)
);
CREATE INDEX journals_by_workspace ON journals (workspace_id, id);
CREATE INDEX journals_by_dataset ON journals (dataset_number);

CREATE TABLE journal_lines (
    workspace_id   TEXT NOT NULL,
    journal_id     BIGINT NOT NULL,
    line_no        BIGINT NOT NULL,
    account        TEXT NOT NULL,
    description    TEXT NOT NULL,
    debit_minor    BIGINT NOT NULL,
    credit_minor   BIGINT NOT NULL,
    currency       TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    PRIMARY KEY (journal_id, line_no)
);
CREATE INDEX journal_lines_by_dataset ON journal_lines (dataset_number);

CREATE TABLE financial_transactions (
    workspace_id   TEXT NOT NULL,
    id             TEXT NOT NULL,
    account        TEXT NOT NULL,
    external_id    TEXT NOT NULL,
    booking_date   TEXT NOT NULL,
    value_date     TEXT NOT NULL,
    amount_minor   BIGINT NOT NULL,
    currency       TEXT NOT NULL,
    counterparty   TEXT NOT NULL,
    description    TEXT NOT NULL,
    reference      TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, account, external_id)
);
CREATE INDEX financial_transactions_by_dataset ON financial_transactions (dataset_number);

CREATE TABLE balance_snapshots (
    workspace_id   TEXT NOT NULL,
    id             TEXT NOT NULL,
    account        TEXT NOT NULL,
    date           TEXT NOT NULL,
    balance_type   TEXT NOT NULL,
    amount_minor   BIGINT NOT NULL,
    currency       TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    dataset_number BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, account, date, balance_type)
);
CREATE INDEX balance_snapshots_by_dataset ON balance_snapshots (dataset_number);
