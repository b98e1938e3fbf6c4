-- Investment orders: the Financial Action a rebalance proposal became (one per proposal), and the
-- workspace's restricted list, which pre-trade checks read (no buy of a restricted instrument).
CREATE TABLE investment_order_links (
    workspace_id TEXT NOT NULL,
    environment  TEXT NOT NULL,
    proposal_id  TEXT NOT NULL,
    action_id    TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, proposal_id)
);

CREATE TABLE restricted_instruments (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    symbol       TEXT NOT NULL,
    reason       TEXT NOT NULL,
    added_by     TEXT NOT NULL,
    added_at     BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, symbol)
);
