//! `--demo`: on an empty database, a sandbox workspace with an application holding every scope, whose key
//! is printed once as `FISCUS_DEMO_KEY=svc_test_…`.

use fiscus_domain::actor::Actor;
use fiscus_domain::credentials::Environment;
use fiscus_domain::scopes::ScopeSet;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Boxed, Store};

use crate::admin::Admin;

pub struct Demo {
    pub workspace_id: String,
    pub application_id: String,
    pub api_key: String,
}

/// Seeds the demo workspace when the database holds no workspace yet; `None` otherwise.
pub fn seed_if_empty<'a>(store: &'a Store, server_key: &'a [u8]) -> Boxed<'a, anyhow::Result<Option<Demo>>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        if fiscus_store::workspaces::count(&mut conn).await? > 0 {
            return Ok(None);
        }
        drop(conn);
        let admin = Admin { store, server_key, actor: Actor::demo() };
        let ws = admin.create_workspace("Demo Workspace", true).await?;
        let app =
            admin.create_application(&ws.id, "Demo Application", Environment::Sandbox, &ScopeSet::all(), None).await?;
        let key = admin.issue_key(&app.id, None).await?;
        let sandbox = Tenant { workspace_id: ws.id.clone(), environment: Environment::Sandbox };
        admin.grant_credits(&sandbox, 10_000, "demo workspace starting grant").await?;
        Ok(Some(Demo { workspace_id: ws.id, application_id: app.id, api_key: key.secret }))
    })
}
