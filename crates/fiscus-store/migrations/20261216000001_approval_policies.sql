-- Approval policies (the organisation's rules of who approves an action), approver groups, and what each
-- action and decision recorded of them. A policy is versioned per workspace and environment as bank details
-- are: a change is the next version, `pending` until a second admin approves it; one pending and one active
-- version at most. Policies, requirements, decision contexts and batches are sealed records (leaves of the
-- transparency log); groups and their members are the people plane's own rows, and what counted at a decision
-- is sealed with it.
CREATE TABLE approval_policies (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    environment   TEXT NOT NULL,
    version       BIGINT NOT NULL,
    body          TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'active', 'rejected', 'superseded')),
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    decided_by    TEXT,
    decided_at    BIGINT,
    decision_note TEXT,
    seal_mac      TEXT,
    UNIQUE (workspace_id, environment, version)
);

CREATE UNIQUE INDEX approval_policies_one_pending ON approval_policies (workspace_id, environment) WHERE state = 'pending';
CREATE UNIQUE INDEX approval_policies_one_active ON approval_policies (workspace_id, environment) WHERE state = 'active';

-- The requirement an action got at proposal, and each tightening a later policy made of it (newest counts).
CREATE TABLE action_requirements (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    action_id    TEXT NOT NULL REFERENCES actions (id),
    policy_id    TEXT,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);

CREATE INDEX action_requirements_action ON action_requirements (workspace_id, action_id);

-- What each decision was given with: the operator's groups then, whether the sole-approver duty applied, the
-- batch it was part of and the person's reason (one per decision).
CREATE TABLE decision_contexts (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    action_id    TEXT NOT NULL REFERENCES actions (id),
    operator_id  TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);

CREATE INDEX decision_contexts_action ON decision_contexts (workspace_id, action_id);

CREATE TABLE approver_groups (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    description  TEXT,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE TABLE approver_group_members (
    group_id     TEXT NOT NULL REFERENCES approver_groups (id),
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    operator_id  TEXT NOT NULL REFERENCES operators (id),
    added_by     TEXT NOT NULL,
    added_at     BIGINT NOT NULL,
    PRIMARY KEY (group_id, operator_id)
);

CREATE INDEX approver_group_members_operator ON approver_group_members (workspace_id, operator_id);

-- A batch of decisions one person gave at once at the console (`/console/approvals/batch`): what was shown,
-- what was decided (each action's own decision, bound to its own envelope hash) and what was left out.
CREATE TABLE approval_batches (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    environment  TEXT NOT NULL,
    operator_id  TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    seal_mac     TEXT
);
