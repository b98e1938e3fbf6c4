-- One sign-in per person: an operator account holds the credentials (password hash, sealed TOTP secret, the
-- last TOTP step spent, the failure count and lock) and the person's preferences; an operator row stays the
-- person's membership of one workspace (its role and status), linked to the account once enrolled. A person
-- invited to a second workspace joins it with the sign-in they already have, and signing in offers the
-- workspaces by name.
CREATE TABLE operator_accounts (
    id              TEXT PRIMARY KEY,
    email           TEXT NOT NULL UNIQUE,
    password_hash   TEXT NOT NULL,
    -- Sealed under the server key with the account id as associated data.
    totp_secret     TEXT NOT NULL,
    totp_confirmed  BIGINT NOT NULL DEFAULT 0,
    totp_last_step  BIGINT,
    failed_attempts BIGINT NOT NULL DEFAULT 0,
    locked_until    BIGINT,
    -- IANA zone the console shows times in (UTC stays on hover).
    time_zone       TEXT NOT NULL DEFAULT 'UTC',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);

-- Existing credentials move to accounts. An account takes the id of the operator row whose credentials it
-- takes, so the TOTP secret sealed with that id still opens. When one e-mail had credentials in several
-- workspaces, the earliest identity's become the person's sign-in for all of them.
INSERT INTO operator_accounts (id, email, password_hash, totp_secret, totp_confirmed, totp_last_step,
                               failed_attempts, locked_until, time_zone, created_at, updated_at)
SELECT o.id, o.email, o.password_hash, o.totp_secret, o.totp_confirmed, o.totp_last_step,
       o.failed_attempts, o.locked_until, 'UTC', o.created_at, o.updated_at
FROM operators o
WHERE o.password_hash IS NOT NULL AND o.totp_secret IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM operators p
                  WHERE p.email = o.email AND p.password_hash IS NOT NULL AND p.totp_secret IS NOT NULL
                    AND (p.created_at < o.created_at OR (p.created_at = o.created_at AND p.id < o.id)));

ALTER TABLE operators ADD COLUMN account_id TEXT REFERENCES operator_accounts (id);

UPDATE operators SET account_id = (SELECT a.id FROM operator_accounts a WHERE a.email = operators.email)
WHERE password_hash IS NOT NULL AND totp_secret IS NOT NULL;

ALTER TABLE operators DROP COLUMN password_hash;
ALTER TABLE operators DROP COLUMN totp_secret;
ALTER TABLE operators DROP COLUMN totp_confirmed;
ALTER TABLE operators DROP COLUMN totp_last_step;
ALTER TABLE operators DROP COLUMN failed_attempts;
ALTER TABLE operators DROP COLUMN locked_until;
