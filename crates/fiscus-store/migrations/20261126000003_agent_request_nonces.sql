-- A signed read's nonce is spent by its request evidence row: a second row with the same client and nonce
-- is refused by this index, in the one transaction that records the read (instead of a row in
-- signature_nonces as well). Only signed reads fill the column, so the partial index costs bearer
-- requests nothing.
ALTER TABLE agent_requests ADD COLUMN nonce TEXT;
CREATE UNIQUE INDEX agent_requests_nonce ON agent_requests (credential_id, nonce) WHERE nonce IS NOT NULL;
