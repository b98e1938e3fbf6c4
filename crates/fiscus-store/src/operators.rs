//! Operators (the human plane): a person's account (their one sign-in), their membership of each workspace
//! (an operator row with its role), and console sessions. Secrets here are an Argon2id password hash, an
//! encrypted TOTP secret, and keyed hashes of enrollment and session tokens.
//!
//! Like credential resolution, `find_by_enrollment` and `resolve_session` look up by a token before the
//! workspace is known, and accounts by what a person presents; everything else takes the workspace first.

use crate::{Result, StoreError, WriteTx};
use fiscus_domain::people::{OperatorStatus, Role};
use sqlx::AnyConnection;

/// An operator of a workspace, role and status decoded where they are read (an unknown stored value is
/// `Corrupt`, which refuses).
#[derive(Clone, Debug)]
pub struct OperatorRow {
    pub id: String,
    pub workspace_id: String,
    pub email: String,
    pub role: Role,
    pub status: OperatorStatus,
    /// The person's sign-in, once enrolled (staged at the first enrollment step, for a person new to Fiscus).
    pub account_id: Option<String>,
    /// 1 when the account behind this identity has proved its authenticator.
    pub totp_confirmed: i64,
    pub enrollment_expires_at: Option<i64>,
    pub created_at: i64,
}

row! {
    struct StoredOperator {
        id: String,
        workspace_id: String,
        email: String,
        role: String,
        status: String,
        account_id: Option<String>,
        totp_confirmed: i64,
        enrollment_expires_at: Option<i64>,
        created_at: i64,
    }
}

fn role_of(stored: &str, id: &str) -> Result<Role> {
    Role::parse(stored).ok_or_else(|| StoreError::Corrupt(format!("operator {id}: role `{stored}`")))
}

fn status_of(stored: &str, id: &str) -> Result<OperatorStatus> {
    OperatorStatus::parse(stored).ok_or_else(|| StoreError::Corrupt(format!("operator {id}: status `{stored}`")))
}

impl TryFrom<StoredOperator> for OperatorRow {
    type Error = StoreError;

    fn try_from(r: StoredOperator) -> Result<OperatorRow> {
        Ok(OperatorRow {
            role: role_of(&r.role, &r.id)?,
            status: status_of(&r.status, &r.id)?,
            id: r.id,
            workspace_id: r.workspace_id,
            email: r.email,
            account_id: r.account_id,
            totp_confirmed: r.totp_confirmed,
            enrollment_expires_at: r.enrollment_expires_at,
            created_at: r.created_at,
        })
    }
}

const COLUMNS: &str = "o.id, o.workspace_id, o.email, o.role, o.status, o.account_id, \
                       CAST(COALESCE(a.totp_confirmed, 0) AS BIGINT) AS totp_confirmed, o.enrollment_expires_at, o.created_at";
const FROM: &str = "operators o LEFT JOIN operator_accounts a ON a.id = o.account_id";

#[expect(clippy::too_many_arguments, reason = "one invitation row: each argument is one of its columns")]
pub async fn insert_invited(
    tx: &mut WriteTx,
    workspace_id: &str,
    id: &str,
    email: &str,
    role: Role,
    enrollment_token_hash: &str,
    enrollment_expires_at: i64,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO operators (id, workspace_id, email, role, status, enrollment_token_hash, enrollment_expires_at, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, 'invited', $5, $6, $7, $7)",
    )
    .bind(id)
    .bind(workspace_id)
    .bind(email)
    .bind(role.as_str())
    .bind(enrollment_token_hash)
    .bind(enrollment_expires_at)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn find_by_enrollment(conn: &mut AnyConnection, token_hash: &str) -> Result<Option<OperatorRow>> {
    sqlx::query_as::<_, StoredOperator>(&format!("SELECT {COLUMNS} FROM {FROM} WHERE o.enrollment_token_hash = $1"))
        .bind(token_hash)
        .fetch_optional(&mut *conn)
        .await?
        .map(OperatorRow::try_from)
        .transpose()
}

pub async fn get(conn: &mut AnyConnection, workspace_id: &str, id: &str) -> Result<OperatorRow> {
    sqlx::query_as::<_, StoredOperator>(&format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE o.workspace_id = $1 AND o.id = $2"
    ))
    .bind(workspace_id)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)?
    .try_into()
}

pub async fn list(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<OperatorRow>> {
    sqlx::query_as::<_, StoredOperator>(&format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE o.workspace_id = $1 ORDER BY o.id"
    ))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?
    .into_iter()
    .map(OperatorRow::try_from)
    .collect()
}

// ------------------------------------------------------------------------------------------------ accounts
//
// An account is a person's sign-in across workspaces: it belongs to no workspace, so, like credential
// resolution, these functions are looked up by what the person presents (an e-mail, an enrollment) or by the
// account id a session or membership names, never listed.

row! {
    #[derive(Clone, Debug)]
    pub struct AccountRow {
        pub id: String,
        pub email: String,
        pub password_hash: String,
        pub totp_secret: String,
        pub totp_confirmed: i64,
        pub totp_last_step: Option<i64>,
        pub failed_attempts: i64,
        pub locked_until: Option<i64>,
        pub time_zone: String,
    }
}

const ACCOUNT_COLUMNS: &str =
    "id, email, password_hash, totp_secret, totp_confirmed, totp_last_step, failed_attempts, locked_until, time_zone";

pub async fn account_by_email(conn: &mut AnyConnection, email: &str) -> Result<Option<AccountRow>> {
    Ok(sqlx::query_as::<_, AccountRow>(&format!("SELECT {ACCOUNT_COLUMNS} FROM operator_accounts WHERE email = $1"))
        .bind(email)
        .fetch_optional(&mut *conn)
        .await?)
}

pub async fn account(conn: &mut AnyConnection, id: &str) -> Result<AccountRow> {
    sqlx::query_as::<_, AccountRow>(&format!("SELECT {ACCOUNT_COLUMNS} FROM operator_accounts WHERE id = $1"))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound)
}

/// The workspaces an account is an active operator of, with each workspace's name, in name order.
pub async fn memberships(conn: &mut AnyConnection, account_id: &str) -> Result<Vec<(OperatorRow, String)>> {
    let rows: Vec<StoredOperator> = sqlx::query_as::<_, StoredOperator>(&format!(
        "SELECT {COLUMNS} FROM {FROM} WHERE o.account_id = $1 AND o.status = 'active' ORDER BY o.id"
    ))
    .bind(account_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let row = OperatorRow::try_from(row)?;
        let (name,): (String,) = sqlx::query_as("SELECT name FROM workspaces WHERE id = $1")
            .bind(&row.workspace_id)
            .fetch_one(&mut *conn)
            .await?;
        out.push((row, name));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.workspace_id.cmp(&b.0.workspace_id)));
    Ok(out)
}

/// Enrollment step one for a person without a sign-in yet (or whose earlier enrollment never proved its
/// authenticator): the account with its password and a new, unconfirmed TOTP secret, linked to the invited
/// identity. A confirmed account is never overwritten (→ `Conflict`): that person joins with it instead.
#[expect(clippy::too_many_arguments, reason = "the invitation, and each column of the staged account")]
pub async fn stage_account(
    tx: &mut WriteTx,
    workspace_id: &str,
    operator_id: &str,
    account_id: &str,
    email: &str,
    password_hash: &str,
    totp_secret: &str,
    now: i64,
) -> Result<()> {
    let staged = sqlx::query(
        "INSERT INTO operator_accounts (id, email, password_hash, totp_secret, totp_confirmed, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, 0, $5, $5) \
         ON CONFLICT (email) DO UPDATE SET password_hash = excluded.password_hash, totp_secret = excluded.totp_secret, \
                updated_at = excluded.updated_at \
         WHERE operator_accounts.totp_confirmed = 0 AND operator_accounts.id = excluded.id",
    )
    .bind(account_id)
    .bind(email)
    .bind(password_hash)
    .bind(totp_secret)
    .bind(now)
    .execute(tx.conn())
    .await?;
    if staged.rows_affected() != 1 {
        return Err(StoreError::Conflict("this e-mail already has a sign-in".into()));
    }
    link(tx, workspace_id, operator_id, account_id, now).await
}

async fn link(tx: &mut WriteTx, workspace_id: &str, operator_id: &str, account_id: &str, now: i64) -> Result<()> {
    let done = sqlx::query(
        "UPDATE operators SET account_id = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4 AND status = 'invited'",
    )
    .bind(account_id)
    .bind(now)
    .bind(workspace_id)
    .bind(operator_id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// Enrollment's last step: a code proved the account's authenticator (its first, for a new person; the one it
/// already has, for a person joining). The account is confirmed with the step spent, the identity becomes
/// active under it, and the enrollment token is spent.
pub async fn activate(
    tx: &mut WriteTx,
    workspace_id: &str,
    id: &str,
    account_id: &str,
    totp_step: i64,
    now: i64,
) -> Result<()> {
    spend_step(tx, account_id, totp_step, now, "totp_confirmed = 1,").await?;
    let done = sqlx::query(
        "UPDATE operators SET status = 'active', account_id = $1, enrollment_token_hash = NULL, \
                enrollment_expires_at = NULL, updated_at = $2 \
         WHERE workspace_id = $3 AND id = $4 AND status = 'invited'",
    )
    .bind(account_id)
    .bind(now)
    .bind(workspace_id)
    .bind(id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

/// A failed sign-in: counts it and, past the threshold, locks the account until `locked_until`.
pub async fn record_failure(tx: &mut WriteTx, account_id: &str, locked_until: Option<i64>, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE operator_accounts SET failed_attempts = failed_attempts + 1, locked_until = $1, updated_at = $2 \
         WHERE id = $3",
    )
    .bind(locked_until)
    .bind(now)
    .bind(account_id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// A successful sign-in: clears the failure count and spends the TOTP step (a code is good once).
pub async fn record_success(tx: &mut WriteTx, account_id: &str, totp_step: i64, now: i64) -> Result<()> {
    spend_step(tx, account_id, totp_step, now, "").await
}

async fn spend_step(tx: &mut WriteTx, account_id: &str, step: i64, now: i64, also: &str) -> Result<()> {
    let done = sqlx::query(&format!(
        "UPDATE operator_accounts SET {also} failed_attempts = 0, locked_until = NULL, totp_last_step = $1, \
                updated_at = $2 \
         WHERE id = $3 AND (totp_last_step IS NULL OR totp_last_step < $1)"
    ))
    .bind(step)
    .bind(now)
    .bind(account_id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::Conflict("totp step already used".into()));
    }
    Ok(())
}

/// The zone the console shows this person's times in (an IANA name the caller has checked).
pub async fn set_time_zone(tx: &mut WriteTx, account_id: &str, zone: &str, now: i64) -> Result<()> {
    let done = sqlx::query("UPDATE operator_accounts SET time_zone = $1, updated_at = $2 WHERE id = $3")
        .bind(zone)
        .bind(now)
        .bind(account_id)
        .execute(tx.conn())
        .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------ sessions

/// A console session with what the console needs of its operator (role and status decoded).
#[derive(Clone, Debug)]
pub struct SessionRow {
    pub id: String,
    pub workspace_id: String,
    pub operator_id: String,
    pub csrf_token: String,
    pub created_at: i64,
    pub last_seen_at: i64,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
    pub email: String,
    pub role: Role,
    pub operator_status: OperatorStatus,
    pub account_id: Option<String>,
    pub time_zone: String,
}

row! {
    struct StoredSession {
        id: String,
        workspace_id: String,
        operator_id: String,
        csrf_token: String,
        created_at: i64,
        last_seen_at: i64,
        expires_at: i64,
        revoked_at: Option<i64>,
        email: String,
        role: String,
        operator_status: String,
        account_id: Option<String>,
        time_zone: String,
    }
}

impl TryFrom<StoredSession> for SessionRow {
    type Error = StoreError;

    fn try_from(r: StoredSession) -> Result<SessionRow> {
        Ok(SessionRow {
            role: role_of(&r.role, &r.operator_id)?,
            operator_status: status_of(&r.operator_status, &r.operator_id)?,
            id: r.id,
            workspace_id: r.workspace_id,
            operator_id: r.operator_id,
            csrf_token: r.csrf_token,
            created_at: r.created_at,
            last_seen_at: r.last_seen_at,
            expires_at: r.expires_at,
            revoked_at: r.revoked_at,
            email: r.email,
            account_id: r.account_id,
            time_zone: r.time_zone,
        })
    }
}

pub struct NewSession<'a> {
    pub id: &'a str,
    pub workspace_id: &'a str,
    pub operator_id: &'a str,
    pub token_hash: &'a str,
    pub csrf_token: &'a str,
    pub now: i64,
    pub expires_at: i64,
}

pub async fn insert_session(tx: &mut WriteTx, s: &NewSession<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO console_sessions (id, workspace_id, operator_id, token_hash, csrf_token, created_at, last_seen_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7)",
    )
    .bind(s.id)
    .bind(s.workspace_id)
    .bind(s.operator_id)
    .bind(s.token_hash)
    .bind(s.csrf_token)
    .bind(s.now)
    .bind(s.expires_at)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn resolve_session(conn: &mut AnyConnection, token_hash: &str) -> Result<Option<SessionRow>> {
    sqlx::query_as::<_, StoredSession>(
        "SELECT s.id, s.workspace_id, s.operator_id, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, s.revoked_at, \
                o.email, o.role, o.status AS operator_status, o.account_id, COALESCE(a.time_zone, 'UTC') AS time_zone \
         FROM console_sessions s JOIN operators o ON o.id = s.operator_id AND o.workspace_id = s.workspace_id \
         LEFT JOIN operator_accounts a ON a.id = o.account_id \
         WHERE s.token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(&mut *conn)
    .await?
    .map(SessionRow::try_from)
    .transpose()
}

pub async fn touch_session(conn: &mut AnyConnection, workspace_id: &str, id: &str, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE console_sessions SET last_seen_at = $1 WHERE workspace_id = $2 AND id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(workspace_id)
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub async fn revoke_session(tx: &mut WriteTx, workspace_id: &str, id: &str, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE console_sessions SET revoked_at = $1 WHERE workspace_id = $2 AND id = $3 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(workspace_id)
    .bind(id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// Operators and how many have a confirmed second factor, for the posture read.
pub async fn second_factor_coverage(conn: &mut AnyConnection, workspace_id: &str) -> Result<(i64, i64)> {
    let (total, with_2fa): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), CAST(COALESCE(SUM(a.totp_confirmed), 0) AS BIGINT) \
         FROM operators o LEFT JOIN operator_accounts a ON a.id = o.account_id \
         WHERE o.workspace_id = $1 AND o.status <> 'removed'",
    )
    .bind(workspace_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok((total, with_2fa))
}
