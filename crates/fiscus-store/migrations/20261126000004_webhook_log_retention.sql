-- The delivery log's retention purge finds old rows by time.
CREATE INDEX webhook_attempts_by_time ON webhook_attempts (created_at);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at);
