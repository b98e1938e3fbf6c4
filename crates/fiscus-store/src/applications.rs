//! Applications: the machine-plane identity. An application has an environment, a status, an entitlement
//! (scope set) and a service class (its rate-limit policy).

use crate::{Result, StoreError, WriteTx};
use fiscus_domain::credentials::{AppStatus, Environment};
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use sqlx::AnyConnection;

row! {
    #[derive(Clone, Debug)]
    pub struct ApplicationRow {
        pub id: String,
        pub workspace_id: String,
        pub environment: String,
        pub name: String,
        pub status: String,
        pub scopes: String,
        pub service_class: String,
        pub created_at: i64,
        pub updated_at: i64,
    }
}

impl ApplicationRow {
    pub fn status(&self) -> Result<AppStatus> {
        AppStatus::parse(&self.status).ok_or_else(|| StoreError::Corrupt(format!("application status {}", self.status)))
    }

    pub fn environment(&self) -> Result<Environment> {
        Environment::parse(&self.environment)
            .ok_or_else(|| StoreError::Corrupt(format!("environment {}", self.environment)))
    }

    pub fn scopes(&self) -> ScopeSet {
        ScopeSet::from_stored(&self.scopes)
    }
}

const COLUMNS: &str = "id, workspace_id, environment, name, status, scopes, service_class, created_at, updated_at";

pub struct NewApplication<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub scopes: &'a ScopeSet,
    pub service_class: &'a str,
    pub created_at: i64,
}

pub async fn insert(conn: &mut AnyConnection, tenant: &Tenant, new: &NewApplication<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO applications (id, workspace_id, environment, name, status, scopes, service_class, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $7)",
    )
    .bind(new.id)
    .bind(&tenant.workspace_id)
    .bind(tenant.environment.as_str())
    .bind(new.name)
    .bind(new.scopes.to_space_separated())
    .bind(new.service_class)
    .bind(new.created_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// An application of the workspace, in either environment (the CLI administers both).
pub async fn get(conn: &mut AnyConnection, workspace_id: &str, application_id: &str) -> Result<ApplicationRow> {
    sqlx::query_as::<_, ApplicationRow>(&format!(
        "SELECT {COLUMNS} FROM applications WHERE workspace_id = $1 AND id = $2"
    ))
    .bind(workspace_id)
    .bind(application_id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(StoreError::NotFound)
}

/// What an application may do now: `None` when it is missing or not active, else its scopes within the
/// workspace's entitlement. Work queued on an application's behalf reads this at each step it takes, so a
/// suspension or a withdrawn scope or entitlement stops it at once (not when the work was queued).
pub async fn authority(conn: &mut AnyConnection, workspace_id: &str, application_id: &str) -> Result<Option<ScopeSet>> {
    let app = match get(conn, workspace_id, application_id).await {
        Ok(app) => app,
        Err(StoreError::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    };
    if app.status()? != AppStatus::Active {
        return Ok(None);
    }
    let workspace = crate::workspaces::get(conn, workspace_id).await?;
    Ok(Some(app.scopes().intersection(&workspace.entitlement())))
}

/// Finds the workspace of an application id, for the CLI, whose commands name only the application.
pub async fn workspace_of(conn: &mut AnyConnection, application_id: &str) -> Result<String> {
    let row: Option<(String,)> = sqlx::query_as("SELECT workspace_id FROM applications WHERE id = $1")
        .bind(application_id)
        .fetch_optional(&mut *conn)
        .await?;
    row.map(|r| r.0).ok_or(StoreError::NotFound)
}

pub async fn list(conn: &mut AnyConnection, workspace_id: &str) -> Result<Vec<ApplicationRow>> {
    Ok(sqlx::query_as::<_, ApplicationRow>(&format!(
        "SELECT {COLUMNS} FROM applications WHERE workspace_id = $1 ORDER BY id"
    ))
    .bind(workspace_id)
    .fetch_all(&mut *conn)
    .await?)
}

pub async fn set_status(
    tx: &mut WriteTx,
    workspace_id: &str,
    application_id: &str,
    status: AppStatus,
    now: i64,
) -> Result<()> {
    tx.standing_changed()?;
    let done = sqlx::query("UPDATE applications SET status = $1, updated_at = $2 WHERE workspace_id = $3 AND id = $4")
        .bind(status.as_str())
        .bind(now)
        .bind(workspace_id)
        .bind(application_id)
        .execute(tx.conn())
        .await?;
    if done.rows_affected() == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
