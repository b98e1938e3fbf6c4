//! Operators (the human plane) and their console sessions. Secrets here are an Argon2id password hash, an
//! encrypted TOTP secret, and keyed hashes of enrollment and session tokens.
//!
//! Like credential resolution, `find_by_enrollment` and `resolve_session` look up by a token before the
//! workspace is known; everything else takes the workspace first.

use crate::{Result, StoreError, WriteTx};
use sqlx::{AnyConnection, FromRow};

#[derive(Clone, Debug, FromRow)]
pub struct OperatorRow {
    pub id: String,
    pub workspace_id: String,
    pub email: String,
    pub role: String,
    pub status: String,
    pub password_hash: Option<String>,
    pub totp_secret: Option<String>,
    pub totp_confirmed: i64,
    pub totp_last_step: Option<i64>,
    pub enrollment_expires_at: Option<i64>,
    pub failed_attempts: i64,
    pub locked_until: Option<i64>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, workspace_id, email, role, status, password_hash, totp_secret, totp_confirmed, totp_last_step, \
                       enrollment_expires_at, failed_attempts, locked_until, created_at";

#[expect(clippy::too_many_arguments, reason = "one invitation row: each argument is one of its columns")]
pub async fn insert_invited(
    tx: &mut WriteTx,
    workspace_id: &str,
    id: &str,
    email: &str,
    role: &str,
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
    .bind(role)
    .bind(enrollment_token_hash)
    .bind(enrollment_expires_at)
    .bind(now)
    .execute(tx.conn())
    .await?;
    Ok(())
}

pub async fn find_by_enrollment(conn: &mut AnyConnection, token_hash: &str) -> Result<Option<OperatorRow>> {
    Ok(sqlx::query_as::<_, OperatorRow>(&format!("SELECT {COLUMNS} FROM operators WHERE enrollment_token_hash = $1"))
        .bind(token_hash)
        .fetch_optional(&mut *conn)
        .await?)
}

/// Enrollment step one: the password and a new (unconfirmed) TOTP secret.
pub async fn set_credentials(
    tx: &mut WriteTx,
    workspace_id: &str,
    id: &str,
    password_hash: &str,
    totp_secret: &str,
    now: i64,
) -> Result<()> {
    let done = sqlx::query(
        "UPDATE operators SET password_hash = $1, totp_secret = $2, totp_confirmed = 0, updated_at = $3 \
         WHERE workspace_id = $4 AND id = $5 AND status = 'invited'",
    )
    .bind(password_hash)
    .bind(totp_secret)
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

/// Enrollment step two: the first code proved the authenticator; the operator becomes active and the
/// enrollment token is spent.
pub async fn activate(tx: &mut WriteTx, workspace_id: &str, id: &str, totp_step: i64, now: i64) -> Result<()> {
    let done = sqlx::query(
        "UPDATE operators SET status = 'active', totp_confirmed = 1, totp_last_step = $1, enrollment_token_hash = NULL, \
                enrollment_expires_at = NULL, updated_at = $2 \
         WHERE workspace_id = $3 AND id = $4 AND status = 'invited' AND password_hash IS NOT NULL AND totp_secret IS NOT NULL",
    )
    .bind(totp_step)
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

/// Every operator identity with this e-mail, in any workspace, with the workspace's name: sign-in asks for
/// an e-mail, never a workspace id. A lookup by presented credentials, like credential resolution: the only
/// other query of this module not scoped to one workspace.
pub async fn find_for_login(conn: &mut AnyConnection, email: &str) -> Result<Vec<(OperatorRow, String)>> {
    let rows: Vec<OperatorRow> =
        sqlx::query_as::<_, OperatorRow>(&format!("SELECT {COLUMNS} FROM operators WHERE email = $1 ORDER BY id"))
            .bind(email)
            .fetch_all(&mut *conn)
            .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let (name,): (String,) = sqlx::query_as("SELECT name FROM workspaces WHERE id = $1")
            .bind(&row.workspace_id)
            .fetch_one(&mut *conn)
            .await?;
        out.push((row, name));
    }
    Ok(out)
}

pub async fn get(conn: &mut AnyConnection, workspace_id: &str, id: &str) -> Result<OperatorRow> {
    sqlx::query_as::<_, OperatorRow>(&format!("SELECT {COLUMNS} FROM operators WHERE workspace_id = $1 AND id = $2"))
        .bind(workspace_id)
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(StoreError::NotFound)
}

pub async fn list(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<OperatorRow>> {
    Ok(sqlx::query_as::<_, OperatorRow>(&format!(
        "SELECT {COLUMNS} FROM operators WHERE workspace_id = $1 ORDER BY id"
    ))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?)
}

/// A failed login: counts it and, past the threshold, locks until `locked_until`.
pub async fn record_failure(
    tx: &mut WriteTx,
    workspace_id: &str,
    id: &str,
    locked_until: Option<i64>,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE operators SET failed_attempts = failed_attempts + 1, locked_until = $1, updated_at = $2 \
         WHERE workspace_id = $3 AND id = $4",
    )
    .bind(locked_until)
    .bind(now)
    .bind(workspace_id)
    .bind(id)
    .execute(tx.conn())
    .await?;
    Ok(())
}

/// A successful login: clears the failure count and spends the TOTP step (a code is good once).
pub async fn record_success(tx: &mut WriteTx, workspace_id: &str, id: &str, totp_step: i64, now: i64) -> Result<()> {
    let done = sqlx::query(
        "UPDATE operators SET failed_attempts = 0, locked_until = NULL, totp_last_step = $1, updated_at = $2 \
         WHERE workspace_id = $3 AND id = $4 AND (totp_last_step IS NULL OR totp_last_step < $1)",
    )
    .bind(totp_step)
    .bind(now)
    .bind(workspace_id)
    .bind(id)
    .execute(tx.conn())
    .await?;
    if done.rows_affected() != 1 {
        return Err(StoreError::Conflict("totp step already used".into()));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------ sessions

#[derive(Clone, Debug, FromRow)]
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
    pub role: String,
    pub operator_status: String,
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
    Ok(sqlx::query_as::<_, SessionRow>(
        "SELECT s.id, s.workspace_id, s.operator_id, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at, s.revoked_at, \
                o.email, o.role, o.status AS operator_status \
         FROM console_sessions s JOIN operators o ON o.id = s.operator_id AND o.workspace_id = s.workspace_id \
         WHERE s.token_hash = $1",
    )
    .bind(token_hash)
    .fetch_optional(&mut *conn)
    .await?)
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
        "SELECT COUNT(*), CAST(COALESCE(SUM(totp_confirmed), 0) AS BIGINT) FROM operators \
         WHERE workspace_id = $1 AND status <> 'removed'",
    )
    .bind(workspace_id)
    .fetch_one(&mut *conn)
    .await?;
    Ok((total, with_2fa))
}
