-- Keyed integrity (HMAC-SHA256 under a key derived from the server key, which is kept outside the
-- database): every audit event and chain head, and every sealed business row, carries a MAC that a
-- database writer without the server key cannot produce. Columns are nullable only so that this migration
-- applies to existing databases; every row written from now on has its MAC, and `fiscus verify` reports
-- a row without one as unverifiable.
ALTER TABLE audit_events ADD COLUMN mac TEXT;
ALTER TABLE audit_heads ADD COLUMN mac TEXT;
ALTER TABLE actions ADD COLUMN seal_mac TEXT;
ALTER TABLE action_checks ADD COLUMN seal_mac TEXT;
ALTER TABLE action_decisions ADD COLUMN seal_mac TEXT;
ALTER TABLE autonomy_evidence ADD COLUMN seal_mac TEXT;
ALTER TABLE settlement_records ADD COLUMN seal_mac TEXT;
ALTER TABLE delegations ADD COLUMN seal_mac TEXT;
ALTER TABLE agent_requests ADD COLUMN seal_mac TEXT;
ALTER TABLE machine_identities ADD COLUMN seal_mac TEXT;
