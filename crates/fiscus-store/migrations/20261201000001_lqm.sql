-- LQM Builder and QLMs: governed quantitative models with a verifiable supply chain.
--
-- Every record belongs to one tenant (workspace and environment) and is sealed. A record's content is kept
-- as canonical JSON (`body`) beside the columns that relate records and keep their rules (one evaluation
-- per checkpoint, one publication per checkpoint, one successor per supply-chain head); `content_hash` is
-- the SHA-256 of the body and the hash other records cite. Records are written once, except where a
-- column says it moves (a request's review, a promotion's decision): those rows are re-sealed.

CREATE TABLE lqm_models (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    name          TEXT NOT NULL,
    task_family   TEXT NOT NULL CHECK (task_family IN ('forecasting', 'anomaly_detection', 'risk')),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (workspace_id, environment, name)
);
CREATE INDEX lqm_models_by_tenant ON lqm_models (workspace_id, environment, id);

CREATE TABLE lqm_contracts (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    environment    TEXT NOT NULL,
    model_id       TEXT NOT NULL REFERENCES lqm_models (id),
    dataset_number BIGINT NOT NULL,
    body           TEXT NOT NULL,
    content_hash   TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    seal_mac       TEXT
);
CREATE INDEX lqm_contracts_by_model ON lqm_contracts (model_id, id);

-- A request moves once, from `pending` to its decision, and an approved one once more, to `trained`.
CREATE TABLE lqm_retraining_requests (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    model_id      TEXT NOT NULL REFERENCES lqm_models (id),
    contract_id   TEXT NOT NULL REFERENCES lqm_contracts (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'cancelled', 'trained')),
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    decided_by    TEXT,
    decided_at    BIGINT,
    decision_note TEXT,
    checkpoint_id TEXT,
    seal_mac      TEXT
);
CREATE INDEX lqm_retraining_requests_by_model ON lqm_retraining_requests (model_id, id);

CREATE TABLE lqm_checkpoints (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    model_id      TEXT NOT NULL REFERENCES lqm_models (id),
    request_id    TEXT NOT NULL UNIQUE REFERENCES lqm_retraining_requests (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);
CREATE INDEX lqm_checkpoints_by_model ON lqm_checkpoints (model_id, id);

CREATE TABLE lqm_evaluations (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL UNIQUE REFERENCES lqm_checkpoints (id),
    verdict       TEXT NOT NULL CHECK (verdict IN ('passed', 'failed')),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);

CREATE TABLE lqm_evidence_packets (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL UNIQUE REFERENCES lqm_checkpoints (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT
);

-- The supply chain: each publication's body names the head before it, and `head` is the SHA-256 of the
-- body, so the tenant's publications form one hash-linked chain. `previous_head` is unique, so two
-- publications racing for the same head cannot both land (the chain never forks); the first links to
-- the genesis head `sha256:` followed by 64 zeros.
CREATE TABLE lqm_publications (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    model_id      TEXT NOT NULL REFERENCES lqm_models (id),
    checkpoint_id TEXT NOT NULL UNIQUE REFERENCES lqm_checkpoints (id),
    revision      BIGINT NOT NULL,
    previous_head TEXT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    seal_mac      TEXT,
    UNIQUE (workspace_id, environment, previous_head),
    UNIQUE (model_id, revision)
);
CREATE INDEX lqm_publications_by_tenant ON lqm_publications (workspace_id, environment, created_at);

-- A promotion is requested by a credential and decided by an operator at the console; an active one is
-- superseded by the next promotion of the model, or revoked by an operator.
CREATE TABLE lqm_promotions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    model_id      TEXT NOT NULL REFERENCES lqm_models (id),
    checkpoint_id TEXT NOT NULL REFERENCES lqm_checkpoints (id),
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'active', 'superseded', 'revoked', 'denied')),
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    decided_by    TEXT,
    decided_at    BIGINT,
    decision_note TEXT,
    ended_by      TEXT,
    ended_at      BIGINT,
    seal_mac      TEXT
);
CREATE INDEX lqm_promotions_by_model ON lqm_promotions (model_id, id);
CREATE INDEX lqm_promotions_by_state ON lqm_promotions (workspace_id, environment, state, id);

CREATE TABLE qlms (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    name         TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT,
    UNIQUE (workspace_id, environment, name)
);
CREATE INDEX qlms_by_tenant ON qlms (workspace_id, environment, id);

-- Each version pins exact checkpoints; a new version is a rebinding an operator decided.
CREATE TABLE qlm_versions (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    qlm_id       TEXT NOT NULL REFERENCES qlms (id),
    version      BIGINT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT,
    UNIQUE (qlm_id, version)
);

CREATE TABLE qlm_runs (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    qlm_id       TEXT NOT NULL REFERENCES qlms (id),
    version      BIGINT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('invoke', 'evaluate')),
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);
CREATE INDEX qlm_runs_by_qlm ON qlm_runs (qlm_id, id);
