//! Agent Spaces, the application layer: operators' promotions and suspensions (`decisions`), runs started,
//! executed by the native runtime and read back (`runs`). Routes (`areas/agents/spaces.rs`), the console
//! (`console/agent_spaces.rs`) and the worker (`workers/agent_runs.rs`) only call these functions.
//!
//! Rules are the domain's (`crate::rules::spaces`): what a space may declare, the native plan of a prompt,
//! when a run goes on the queue.

pub mod decisions;
pub mod runs;

use crate::rules::spaces::SpaceDecision as Kind;
use crate::tables::spaces::{self as store, Decision, Space, Version};
use fiscus_domain::tenancy::Tenant;

use fiscus_kernel::Services;
use fiscus_kernel::governed::Failure;

/// A space of the workspace as its decisions leave it.
pub struct Standing {
    pub space: Space,
    /// The promoted version in force; `None` while the space is suspended.
    pub active: Option<Version>,
    pub decisions: Vec<Decision>,
}

impl Standing {
    pub fn suspended(&self) -> bool {
        self.active.is_none()
    }
}

async fn standing_of(services: &Services, tenant: &Tenant, space: Space) -> Result<Standing, Failure> {
    let key = services.store.seal_key();
    let mut conn = services.store.read().await?;
    let decisions = store::decisions_of(&mut conn, key, tenant, &space.id).await?;
    let active = match decisions.last() {
        Some(d) if d.body.decision == Kind::Promote => {
            let id = d.body.version_id.as_deref().ok_or_else(|| Failure::internal("a promotion names no version"))?;
            Some(store::get_version(&mut conn, key, tenant, id).await?)
        }
        _ => None,
    };
    Ok(Standing { space, active, decisions })
}

/// One space of the tenant with its standing; another tenant's is `NotFound`.
pub async fn standing(services: &Services, tenant: &Tenant, space_id: &str) -> Result<Standing, Failure> {
    if !fiscus_domain::ids::is_id_of("asp", space_id) {
        return Err(Failure::NotFound);
    }
    let space = {
        let mut conn = services.store.read().await?;
        store::get_space(&mut conn, services.store.seal_key(), tenant, space_id).await?
    };
    standing_of(services, tenant, space).await
}

/// Every space of the tenant (each was promoted at least once), oldest first.
pub async fn all(services: &Services, tenant: &Tenant) -> Result<Vec<Standing>, Failure> {
    let spaces = {
        let mut conn = services.store.read().await?;
        store::spaces(&mut conn, services.store.seal_key(), tenant).await?
    };
    let mut out = Vec::with_capacity(spaces.len());
    for s in spaces {
        out.push(standing_of(services, tenant, s).await?);
    }
    Ok(out)
}
