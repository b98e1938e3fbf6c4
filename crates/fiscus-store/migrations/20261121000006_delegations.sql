-- Machine identities (Ed25519 public keys), bounded delegations that only operators activate, budget
-- reservations counted atomically, and the nonces of machine authority evidence (each usable once).
CREATE TABLE machine_identities (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    name         TEXT NOT NULL,
    public_key   TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('active', 'revoked')),
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX machine_identities_by_tenant ON machine_identities (workspace_id, environment, id);

CREATE TABLE delegations (
    id                     TEXT PRIMARY KEY,
    workspace_id           TEXT NOT NULL REFERENCES workspaces (id),
    environment            TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    identity_id            TEXT NOT NULL REFERENCES machine_identities (id),
    action_kind            TEXT NOT NULL,
    counterparty           TEXT NOT NULL,
    connector              TEXT NOT NULL,
    currency               TEXT NOT NULL,
    execution_mode         TEXT NOT NULL,
    risk_tier              TEXT NOT NULL CHECK (risk_tier IN ('T1', 'T2')),
    per_action_limit_minor BIGINT NOT NULL CHECK (per_action_limit_minor > 0),
    daily_limit_minor      BIGINT NOT NULL CHECK (daily_limit_minor > 0),
    monthly_limit_minor    BIGINT NOT NULL CHECK (monthly_limit_minor > 0),
    expires_at             BIGINT NOT NULL,
    status                 TEXT NOT NULL CHECK (status IN ('draft', 'active', 'suspended', 'revoked')),
    terms_hash             TEXT NOT NULL,
    created_by             TEXT NOT NULL,
    decided_by             TEXT,
    decided_at             BIGINT,
    created_at             BIGINT NOT NULL
);
CREATE INDEX delegations_by_tenant ON delegations (workspace_id, environment, id);

CREATE TABLE budget_reservations (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    delegation_id TEXT NOT NULL REFERENCES delegations (id),
    action_id     TEXT NOT NULL UNIQUE REFERENCES actions (id),
    amount_minor  BIGINT NOT NULL,
    day           TEXT NOT NULL,
    month         TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('reserved', 'consumed', 'released')),
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX budget_reservations_by_delegation ON budget_reservations (delegation_id, state, day, month);

CREATE TABLE machine_nonces (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    identity_id  TEXT NOT NULL REFERENCES machine_identities (id),
    nonce        TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (identity_id, nonce)
);
