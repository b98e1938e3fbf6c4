//! Administration of the machine plane, as the operator of the deployment does it from the CLI: workspaces,
//! applications, API keys and OAuth clients. Each change is audited in the same transaction, with the CLI as
//! the actor. Secrets are returned once and never stored.
//!
//! It is long because it is the deployment operator's whole surface (workspaces, applications, keys, OAuth
//! clients, operators, credits), each function a short audited transaction.

use anyhow::{Context, bail};
use fiscus_domain::actor::Actor;
use fiscus_domain::audit_action::Change;
use fiscus_domain::clock::now_micros;
use fiscus_domain::credentials::{self, AppStatus, CredentialStatus, Environment, SecretKind};
use fiscus_domain::ids::new_id;
use fiscus_domain::people::Role;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::applications::{ApplicationRow, NewApplication};
use fiscus_store::credentials::{ApiKeyRow, NewApiKey, OAuthClientRow};
use fiscus_store::workspaces::{NewWorkspace, WorkspaceRow};
use fiscus_store::{Boxed, Store, StoreError, WriteTx};
use serde_json::{Value, json};

use fiscus_kernel::governed::Caller;
use fiscus_kernel::governed::record::AuditEntry;
use fiscus_kernel::settings::DEFAULT_SERVICE_CLASS;

pub struct Admin<'a> {
    pub store: &'a Store,
    pub server_key: &'a [u8],
    pub actor: Actor,
}

/// A secret shown once, with the id of what it belongs to.
pub struct IssuedSecret {
    pub id: String,
    pub secret: String,
}

impl Admin<'_> {
    async fn audit(
        &self,
        tx: &mut WriteTx,
        workspace_id: &str,
        environment: Option<Environment>,
        action: Change,
        subject: &str,
        details: Value,
    ) -> anyhow::Result<()> {
        fiscus_kernel::governed::record::audit(
            tx,
            &Caller::bare(self.actor.clone()),
            &AuditEntry {
                workspace_id,
                environment,
                action: action.into(),
                subject: Some(subject),
                details,
                occurred_at: now_micros(),
            },
        )
        .await
        .map_err(|e| anyhow::anyhow!("audit: {e}"))
    }

    pub fn create_workspace<'a>(&'a self, name: &'a str, is_demo: bool) -> Boxed<'a, anyhow::Result<WorkspaceRow>> {
        Box::pin(async move {
            let name = name.trim();
            if name.is_empty() || name.len() > 200 {
                bail!("a workspace name must be 1 to 200 characters");
            }
            let id = new_id("wsp");
            let entitlement = ScopeSet::all();
            let mut tx = self.store.begin().await?;
            fiscus_store::workspaces::insert(
                &mut tx,
                &NewWorkspace { id: &id, name, entitlement: &entitlement, is_demo, created_at: now_micros() },
            )
            .await?;
            self.audit(&mut tx, &id, None, Change::AdminWorkspaceCreate, &id, json!({ "name": name, "demo": is_demo }))
                .await?;
            let row = fiscus_store::workspaces::get(tx.conn(), &id).await?;
            tx.commit().await?;
            Ok(row)
        })
    }

    pub fn create_application<'a>(
        &'a self,
        workspace_id: &'a str,
        name: &'a str,
        environment: Environment,
        scopes: &'a ScopeSet,
        service_class: Option<&'a str>,
    ) -> Boxed<'a, anyhow::Result<ApplicationRow>> {
        Box::pin(async move {
            let name = name.trim();
            if name.is_empty() || name.len() > 200 {
                bail!("an application name must be 1 to 200 characters");
            }
            if scopes.is_empty() {
                bail!("an application needs at least one scope");
            }
            let mut conn = self.store.read().await?;
            let ws = fiscus_store::workspaces::get(&mut conn, workspace_id)
                .await
                .map_err(|e| not_found(e, "workspace", workspace_id))?;
            drop(conn);
            let outside: Vec<&str> = scopes.iter().filter(|s| !ws.entitlement().contains(s)).collect();
            if !outside.is_empty() {
                bail!("the workspace is not entitled to: {}", outside.join(", "));
            }
            let id = new_id("app");
            let class = service_class.unwrap_or(DEFAULT_SERVICE_CLASS);
            let tenant = Tenant { workspace_id: workspace_id.to_string(), environment };
            let mut tx = self.store.begin().await?;
            fiscus_store::applications::insert(
                tx.conn(),
                &tenant,
                &NewApplication { id: &id, name, scopes, service_class: class, created_at: now_micros() },
            )
            .await?;
            self.audit(
                &mut tx,
                workspace_id,
                Some(environment),
                Change::AdminApplicationCreate,
                &id,
                json!({ "name": name, "scopes": scopes.to_space_separated(), "service_class": class }),
            )
            .await?;
            let row = fiscus_store::applications::get(tx.conn(), workspace_id, &id).await?;
            tx.commit().await?;
            Ok(row)
        })
    }

    /// Sets the scopes a workspace may grant (its entitlement, e.g. from its commercial plan).
    pub fn set_workspace_entitlement<'a>(
        &'a self,
        workspace_id: &'a str,
        entitlement: &'a ScopeSet,
    ) -> Boxed<'a, anyhow::Result<WorkspaceRow>> {
        Box::pin(async move {
            let mut tx = self.store.begin().await?;
            fiscus_store::workspaces::set_entitlement(&mut tx, workspace_id, entitlement)
                .await
                .map_err(|e| not_found(e, "workspace", workspace_id))?;
            self.audit(
                &mut tx,
                workspace_id,
                None,
                Change::AdminWorkspaceEntitlement,
                workspace_id,
                json!({ "entitlement": entitlement.to_space_separated() }),
            )
            .await?;
            let row = fiscus_store::workspaces::get(tx.conn(), workspace_id).await?;
            tx.commit().await?;
            Ok(row)
        })
    }

    /// Invites an operator (the human plane). Returns the operator id and the one-time enrollment token,
    /// valid for 72 hours; the operator sets a password and enrolls a TOTP factor at the console.
    pub fn add_operator<'a>(
        &'a self,
        workspace_id: &'a str,
        email: &'a str,
        role: Role,
    ) -> Boxed<'a, anyhow::Result<(String, String)>> {
        Box::pin(async move {
            let email = email.trim().to_ascii_lowercase();
            if !(3..=254).contains(&email.len()) || !email.contains('@') || email.chars().any(char::is_whitespace) {
                bail!("{email:?} is not an e-mail address");
            }
            let mut conn = self.store.read().await?;
            fiscus_store::workspaces::get(&mut conn, workspace_id)
                .await
                .map_err(|e| not_found(e, "workspace", workspace_id))?;
            drop(conn);
            let id = new_id("opr");
            let token = credentials::mint(SecretKind::EnrollmentToken);
            let now = now_micros();
            let mut tx = self.store.begin().await?;
            fiscus_store::operators::insert_invited(
                &mut tx,
                workspace_id,
                &id,
                &email,
                role,
                &credentials::keyed_hash(self.server_key, &token.full),
                now + 72 * 3600 * fiscus_domain::clock::MICROS_PER_SECOND,
                now,
            )
            .await
            .map_err(|e| match e {
                StoreError::Conflict(_) => anyhow::anyhow!("{email} is already an operator of {workspace_id}"),
                other => other.into(),
            })?;
            self.audit(
                &mut tx,
                workspace_id,
                None,
                Change::AdminOperatorInvite,
                &id,
                json!({ "email": email, "role": role.as_str() }),
            )
            .await?;
            tx.commit().await?;
            Ok((id, token.full))
        })
    }

    pub fn list_operators<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> Boxed<'a, anyhow::Result<Vec<fiscus_store::operators::OperatorRow>>> {
        Box::pin(async move {
            let mut conn = self.store.read().await?;
            Ok(fiscus_store::operators::list(&mut conn, workspace_id).await?)
        })
    }

    async fn application(&self, application_id: &str) -> anyhow::Result<ApplicationRow> {
        let mut conn = self.store.read().await?;
        let workspace_id = fiscus_store::applications::workspace_of(&mut conn, application_id)
            .await
            .map_err(|e| not_found(e, "application", application_id))?;
        Ok(fiscus_store::applications::get(&mut conn, &workspace_id, application_id).await?)
    }

    pub fn set_application_status<'a>(
        &'a self,
        application_id: &'a str,
        status: AppStatus,
    ) -> Boxed<'a, anyhow::Result<ApplicationRow>> {
        Box::pin(async move {
            let app = self.application(application_id).await?;
            if app.status()? == AppStatus::Revoked && status != AppStatus::Revoked {
                bail!("application {application_id} is revoked; revocation is final");
            }
            let mut tx = self.store.begin().await?;
            fiscus_store::applications::set_status(&mut tx, &app.workspace_id, &app.id, status, now_micros()).await?;
            if status == AppStatus::Revoked {
                fiscus_store::credentials::end_active_keys(
                    &mut tx,
                    &app.workspace_id,
                    &app.id,
                    CredentialStatus::Revoked,
                    now_micros(),
                )
                .await?;
            }
            self.audit(
                &mut tx,
                &app.workspace_id,
                Some(app.environment()?),
                Change::AdminApplicationStatus,
                &app.id,
                json!({ "from": app.status, "to": status.as_str() }),
            )
            .await?;
            let row = fiscus_store::applications::get(tx.conn(), &app.workspace_id, &app.id).await?;
            tx.commit().await?;
            Ok(row)
        })
    }

    /// Issues a new API key for an application (keeping its other keys).
    pub fn issue_key<'a>(
        &'a self,
        application_id: &'a str,
        expires_at: Option<i64>,
    ) -> Boxed<'a, anyhow::Result<IssuedSecret>> {
        Box::pin(async move { self.issue_key_inner(application_id, expires_at, false).await })
    }

    /// Ends every active key of the application at once and issues a replacement.
    pub fn rotate_key<'a>(&'a self, application_id: &'a str) -> Boxed<'a, anyhow::Result<IssuedSecret>> {
        Box::pin(async move { self.issue_key_inner(application_id, None, true).await })
    }

    async fn issue_key_inner(
        &self,
        application_id: &str,
        expires_at: Option<i64>,
        rotate: bool,
    ) -> anyhow::Result<IssuedSecret> {
        let app = self.application(application_id).await?;
        if app.status()? != AppStatus::Active {
            bail!("application {application_id} is {}; only active applications get keys", app.status);
        }
        let environment = app.environment()?;
        let minted = credentials::mint(environment.api_key_kind());
        let key_id = new_id("key");
        let now = now_micros();
        let mut tx = self.store.begin().await?;
        let rotated = if rotate {
            fiscus_store::credentials::end_active_keys(
                &mut tx,
                &app.workspace_id,
                &app.id,
                CredentialStatus::Rotated,
                now,
            )
            .await?
        } else {
            0
        };
        fiscus_store::credentials::insert_api_key(
            tx.conn(),
            &app.workspace_id,
            &NewApiKey {
                id: &key_id,
                application_id: &app.id,
                lookup: &minted.lookup,
                secret_hash: &credentials::keyed_hash(self.server_key, &minted.full),
                hint: &minted.hint(),
                created_at: now,
                expires_at,
            },
        )
        .await?;
        let action = if rotate { Change::AdminApiKeyRotate } else { Change::AdminApiKeyIssue };
        self.audit(
            &mut tx,
            &app.workspace_id,
            Some(environment),
            action,
            &key_id,
            json!({ "application_id": app.id, "hint": minted.hint(), "ended_keys": rotated }),
        )
        .await?;
        tx.commit().await?;
        Ok(IssuedSecret { id: key_id, secret: minted.full })
    }

    /// Revokes one key, or every active key of the application when `key_id` is `None`.
    pub fn revoke_keys<'a>(
        &'a self,
        application_id: &'a str,
        key_id: Option<&'a str>,
    ) -> Boxed<'a, anyhow::Result<u64>> {
        Box::pin(async move {
            let app = self.application(application_id).await?;
            let now = now_micros();
            let mut tx = self.store.begin().await?;
            let revoked = match key_id {
                Some(id) => {
                    let keys =
                        fiscus_store::credentials::list_api_keys(tx.conn(), &app.workspace_id, Some(&app.id)).await?;
                    if !keys.iter().any(|k| k.id == id) {
                        bail!("key {id} does not belong to application {application_id}");
                    }
                    fiscus_store::credentials::revoke_api_key(&mut tx, &app.workspace_id, id, now)
                        .await
                        .map_err(|e| not_found(e, "active key", id))?;
                    1
                }
                None => {
                    fiscus_store::credentials::end_active_keys(
                        &mut tx,
                        &app.workspace_id,
                        &app.id,
                        CredentialStatus::Revoked,
                        now,
                    )
                    .await?
                }
            };
            self.audit(
                &mut tx,
                &app.workspace_id,
                Some(app.environment()?),
                Change::AdminApiKeyRevoke,
                key_id.unwrap_or(&app.id),
                json!({ "application_id": app.id, "revoked": revoked }),
            )
            .await?;
            tx.commit().await?;
            Ok(revoked)
        })
    }

    pub fn create_oauth_client<'a>(&'a self, application_id: &'a str) -> Boxed<'a, anyhow::Result<IssuedSecret>> {
        Box::pin(async move {
            let app = self.application(application_id).await?;
            if app.status()? != AppStatus::Active {
                bail!("application {application_id} is {}; only active applications get clients", app.status);
            }
            let client_id = new_id("cli");
            let minted = credentials::mint(SecretKind::ClientSecret);
            let now = now_micros();
            let mut tx = self.store.begin().await?;
            fiscus_store::credentials::insert_oauth_client(
                tx.conn(),
                &app.workspace_id,
                &app.id,
                &client_id,
                &credentials::keyed_hash(self.server_key, &minted.full),
                &minted.hint(),
                now,
            )
            .await?;
            self.audit(
                &mut tx,
                &app.workspace_id,
                Some(app.environment()?),
                Change::AdminOAuthClientCreate,
                &client_id,
                json!({ "application_id": app.id }),
            )
            .await?;
            tx.commit().await?;
            Ok(IssuedSecret { id: client_id, secret: minted.full })
        })
    }

    /// Replaces a client's secret and revokes its live tokens. `target` is a client id, or an application id
    /// with exactly one client.
    pub fn rotate_oauth_client<'a>(&'a self, target: &'a str) -> Boxed<'a, anyhow::Result<(IssuedSecret, u64)>> {
        Box::pin(async move {
            let mut conn = self.store.read().await?;
            let client = match fiscus_store::credentials::find_oauth_client(&mut conn, target).await? {
                Some(c) => c,
                None => {
                    let app = self.application(target).await?;
                    let mut clients =
                        fiscus_store::credentials::list_oauth_clients(&mut conn, &app.workspace_id, Some(&app.id))
                            .await?;
                    clients.retain(|c| c.status == CredentialStatus::Active);
                    match clients.len() {
                        1 => clients.remove(0),
                        0 => bail!("application {target} has no OAuth client"),
                        _ => bail!("application {target} has several OAuth clients; name one with its client id"),
                    }
                }
            };
            drop(conn);
            let minted = credentials::mint(SecretKind::ClientSecret);
            let now = now_micros();
            let mut tx = self.store.begin().await?;
            let revoked = fiscus_store::credentials::rotate_oauth_client_secret(
                &mut tx,
                &client.workspace_id,
                &client.id,
                &credentials::keyed_hash(self.server_key, &minted.full),
                &minted.hint(),
                now,
            )
            .await?;
            self.audit(
                &mut tx,
                &client.workspace_id,
                None,
                Change::AdminOAuthClientRotate,
                &client.id,
                json!({ "revoked_tokens": revoked }),
            )
            .await?;
            tx.commit().await?;
            Ok((IssuedSecret { id: client.id, secret: minted.full }, revoked))
        })
    }

    /// Registers a draft signed execution client under an application; returns its id. Only the console
    /// grants it anything.
    pub fn register_execution_client<'a>(
        &'a self,
        application_id: &'a str,
        name: &'a str,
        public_key: &'a str,
    ) -> Boxed<'a, anyhow::Result<String>> {
        Box::pin(async move {
            let app = self.application(application_id).await?;
            let environment = Environment::parse(&app.environment).context("stored environment")?;
            let tenant = Tenant { workspace_id: app.workspace_id.clone(), environment };
            let mut tx = self.store.begin().await?;
            let client = fiscus_kernel::governed::execution_clients::register(
                &mut tx,
                &tenant,
                &Caller::bare(self.actor.clone()),
                application_id,
                name,
                public_key,
            )
            .await
            .map_err(|e| match e {
                fiscus_kernel::governed::Failure::Invalid(fields) => anyhow::anyhow!(
                    "{}",
                    fields.iter().map(|(f, why)| format!("{f}: {why}")).collect::<Vec<_>>().join("; ")
                ),
                other => anyhow::anyhow!("{other:?}"),
            })?;
            tx.commit().await?;
            Ok(client.id)
        })
    }

    pub fn list_execution_clients<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> Boxed<'a, anyhow::Result<Vec<fiscus_store::execution_clients::Standing>>> {
        Box::pin(async move {
            let mut conn = self.store.read().await?;
            Ok(fiscus_store::execution_clients::list(&mut conn, self.store.seal_key(), workspace_id).await?)
        })
    }

    pub fn list_workspaces<'a>(&'a self) -> Boxed<'a, anyhow::Result<Vec<WorkspaceRow>>> {
        Box::pin(async move {
            let mut conn = self.store.read().await?;
            Ok(fiscus_store::workspaces::list_all(&mut conn).await?)
        })
    }

    pub fn list_applications<'a>(&'a self, workspace_id: &'a str) -> Boxed<'a, anyhow::Result<Vec<ApplicationRow>>> {
        Box::pin(async move {
            let mut conn = self.store.read().await?;
            fiscus_store::workspaces::get(&mut conn, workspace_id)
                .await
                .map_err(|e| not_found(e, "workspace", workspace_id))?;
            Ok(fiscus_store::applications::list(&mut conn, workspace_id).await?)
        })
    }

    pub fn list_keys<'a>(&'a self, application_id: &'a str) -> Boxed<'a, anyhow::Result<Vec<ApiKeyRow>>> {
        Box::pin(async move {
            let app = self.application(application_id).await?;
            let mut conn = self.store.read().await?;
            Ok(fiscus_store::credentials::list_api_keys(&mut conn, &app.workspace_id, Some(&app.id)).await?)
        })
    }

    pub fn list_oauth_clients<'a>(&'a self, application_id: &'a str) -> Boxed<'a, anyhow::Result<Vec<OAuthClientRow>>> {
        Box::pin(async move {
            let app = self.application(application_id).await?;
            let mut conn = self.store.read().await?;
            Ok(fiscus_store::credentials::list_oauth_clients(&mut conn, &app.workspace_id, Some(&app.id)).await?)
        })
    }

    /// Records an AI credit grant (the ledger's only way in besides metered consumption).
    pub fn grant_credits<'a>(
        &'a self,
        tenant: &'a Tenant,
        credits: i64,
        reason: &'a str,
    ) -> Boxed<'a, anyhow::Result<String>> {
        Box::pin(async move {
            if credits <= 0 {
                bail!("a grant must be a positive number of credits");
            }
            let id = new_id("crd");
            let mut tx = self.store.begin().await?;
            fiscus_kernel::tables::credits::record(
                tx.conn(),
                tenant,
                &fiscus_kernel::tables::credits::NewEntry {
                    id: &id,
                    kind: fiscus_kernel::tables::credits::EntryKind::Grant,
                    credits,
                    reason,
                    reference: None,
                    created_at: now_micros(),
                },
            )
            .await
            .context("recording the grant")?;
            self.audit(
                &mut tx,
                &tenant.workspace_id,
                Some(tenant.environment),
                Change::AdminCreditsGrant,
                &id,
                json!({ "credits": credits, "reason": reason }),
            )
            .await?;
            tx.commit().await?;
            Ok(id)
        })
    }
}

fn not_found(e: StoreError, what: &str, id: &str) -> anyhow::Error {
    match e {
        StoreError::NotFound => anyhow::anyhow!("no {what} {id}"),
        other => other.into(),
    }
}
