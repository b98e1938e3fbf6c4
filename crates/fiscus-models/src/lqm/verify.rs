//! `fiscus verify models`: recomputes each tenant's supply chain of published models from the stored
//! publications and the model hub: every publication's head from its record, every link from the genesis
//! head to the newest (a publication whose previous head is on no publication is a broken link; two that
//! share one are a fork), and every artifact's bytes in the hub against its recorded hash and size, the
//! checkpoint, evaluation and evidence packet among them against the hashes the publication cites.

use std::collections::{HashMap, HashSet};

use crate::rules::lqm::records::GENESIS_HEAD;
use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::{Store, StoreError};

use super::hub::{self, Fault};

/// What was checked, and every problem found (empty when the chain and the hub are intact).
#[derive(Debug, Default)]
pub struct ModelsReport {
    pub publications: u64,
    pub artifacts: u64,
    pub problems: Vec<String>,
}

/// Verifies one workspace's supply chains (both environments), from any node: the hub is in the database.
pub fn verify_models<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<ModelsReport>> {
    Box::pin(async move {
        let mut report = ModelsReport::default();
        let mut conn = store.read().await?;
        for environment in [Environment::Sandbox, Environment::Production] {
            let tenant = Tenant { workspace_id: workspace_id.to_string(), environment };
            let env = environment.as_str();
            let chain = match crate::tables::lqm::supply_chain::chain(&mut conn, store.seal_key(), &tenant).await {
                Ok(c) => c,
                Err(StoreError::Tampered(what)) => {
                    report.problems.push(format!("{env}: a publication was altered in the database ({what})"));
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let mut successors: HashMap<&str, Vec<&str>> = HashMap::new();
            for p in &chain {
                report.publications += 1;
                if fiscus_domain::evidence::seal_bytes(p.body_json.as_bytes()) != p.content_hash {
                    report
                        .problems
                        .push(format!("{env}: publication {}: its head is not the hash of its record", p.id));
                }
                successors.entry(p.body.previous_head.as_str()).or_default().push(p.content_hash.as_str());
                let cited = [
                    ("checkpoint.json", &p.body.checkpoint_hash),
                    ("evaluation.json", &p.body.evaluation_hash),
                    ("evidence-packet.json", &p.body.evidence_packet_hash),
                ];
                for (name, hash) in cited {
                    if !p.body.artifacts.iter().any(|a| a.name == name && &a.sha256 == hash) {
                        report.problems.push(format!("{env}: publication {}: {name} is not the hash it cites", p.id));
                    }
                }
                let bundle = fiscus_domain::jcs::canonicalize(&serde_json::to_value(&p.body.artifacts)?)
                    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
                if fiscus_domain::evidence::seal_bytes(bundle.as_bytes()) != p.body.bundle_hash {
                    report
                        .problems
                        .push(format!("{env}: publication {}: its bundle hash does not match its artifacts", p.id));
                }
                for a in &p.body.artifacts {
                    report.artifacts += 1;
                    let size = u64::try_from(a.size).unwrap_or(u64::MAX);
                    match hub::check(&mut conn, workspace_id, &a.sha256, size).await? {
                    Ok(()) => {}
                    Err(Fault::Missing) => report.problems.push(format!(
                        "{env}: publication {}: artifact {} ({}) is missing from the model hub",
                        p.id, a.name, a.sha256
                    )),
                    Err(Fault::Altered) => report.problems.push(format!(
                        "{env}: publication {}: artifact {} was altered in the model hub (its bytes no longer hash to {})",
                        p.id, a.name, a.sha256
                    )),
                }
                }
            }
            // Walk the links from the genesis head; whatever is not reached hangs off a missing link.
            let mut reached: HashSet<&str> = HashSet::new();
            let mut head = GENESIS_HEAD;
            while let Some(next) = successors.get(head) {
                if next.len() > 1 {
                    report.problems.push(format!("{env}: the chain forks after {head}"));
                }
                head = next[0];
                if !reached.insert(head) {
                    break;
                }
            }
            for p in &chain {
                if !reached.contains(p.content_hash.as_str()) {
                    report.problems.push(format!(
                        "{env}: publication {} links to {}, which no publication on the chain is (a broken link)",
                        p.id, p.body.previous_head
                    ));
                }
            }
        }
        Ok(report)
    })
}
