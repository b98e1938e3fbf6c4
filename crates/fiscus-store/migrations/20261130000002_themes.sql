-- Thematic universes handed off by research, the model portfolios drawn from them (drafts until a person
-- approves them at the console), and governed AI operations, which draw rebalance proposals from an
-- approved model portfolio. Universes belong to the workspace (both environments read them, as data);
-- model portfolios and operations to the environment that created them. All three are sealed; a model
-- portfolio changes once (its decision) and is re-sealed.

INSERT INTO data_counters (name, value) VALUES ('universes', 0);

CREATE TABLE investment_universes (
    uid           TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    id            BIGINT NOT NULL UNIQUE,
    name          TEXT NOT NULL,
    theme         TEXT NOT NULL,
    source        TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'handed_off')),
    members_hash  TEXT,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    handed_off_at BIGINT,
    seal_mac      TEXT
);
CREATE INDEX investment_universes_by_workspace ON investment_universes (workspace_id, id);

CREATE TABLE universe_members (
    workspace_id  TEXT NOT NULL,
    universe_id   BIGINT NOT NULL,
    symbol        TEXT NOT NULL,
    instrument_id TEXT NOT NULL,
    relevance     TEXT NOT NULL,
    rationale     TEXT NOT NULL,
    PRIMARY KEY (universe_id, symbol)
);

CREATE TABLE model_portfolios (
    id               TEXT PRIMARY KEY,
    workspace_id     TEXT NOT NULL REFERENCES workspaces (id),
    environment      TEXT NOT NULL,
    universe_id      BIGINT NOT NULL,
    name             TEXT NOT NULL,
    weighting        TEXT NOT NULL CHECK (weighting IN ('relevance', 'equal')),
    member_limit     BIGINT NOT NULL,
    benchmark_symbol TEXT,
    holdings         TEXT NOT NULL,
    content_hash     TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('approval_required', 'approved', 'rejected')),
    created_by       TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    decided_by       TEXT,
    decided_at       BIGINT,
    decision_note    TEXT,
    seal_mac         TEXT
);
CREATE INDEX model_portfolios_by_state ON model_portfolios (workspace_id, environment, state, id);

CREATE TABLE governed_ai_operations (
    id                   TEXT PRIMARY KEY,
    workspace_id         TEXT NOT NULL REFERENCES workspaces (id),
    environment          TEXT NOT NULL,
    portfolio_id         BIGINT NOT NULL,
    model_portfolio_id   TEXT NOT NULL,
    model_portfolio_hash TEXT NOT NULL,
    objective            TEXT NOT NULL,
    agent                TEXT,
    status               TEXT NOT NULL CHECK (status IN ('governed_review', 'closed')),
    created_by           TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    seal_mac             TEXT
);
