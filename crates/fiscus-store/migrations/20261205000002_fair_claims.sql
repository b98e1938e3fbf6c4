-- Fair claims count each workspace's live claims per queue (fiscus_store::fair).
CREATE INDEX compute_jobs_running_by_workspace ON compute_jobs (workspace_id, state, claimed_at);
CREATE INDEX workflow_runs_claims_by_workspace ON workflow_runs (workspace_id, claimed_at);
CREATE INDEX agent_runs_claims_by_workspace ON agent_runs (workspace_id, claimed_at);
CREATE INDEX webhook_queues_claims_by_workspace ON webhook_queues (workspace_id, claimed_at);
