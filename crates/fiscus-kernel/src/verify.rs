//! `fiscus verify`: recomputes each workspace's audit chain from the stored rows (hashes, links and keyed
//! MACs, page by page), requires it to reach its anchor kept outside the database, checks every sealed
//! business row against its keyed seal, and recomputes every action's public envelope hash from its row.

use fiscus_domain::audit::{Anchor, ChainBreak, ChainVerifier, check_anchor};
use fiscus_store::Store;
use fiscus_store::sealed_tables::Unsealed;
use std::collections::BTreeMap;

pub struct ChainReport {
    pub workspace_id: String,
    pub events: i64,
    pub result: Result<(), ChainBreak>,
}

const PAGE: i64 = 1000;

/// Verifies one workspace's chain; `anchor` is its head as anchored outside the database, if any.
pub fn verify_workspace<'a>(
    store: &'a Store,
    workspace_id: &'a str,
    anchor: Option<&'a Anchor>,
) -> fiscus_store::Boxed<'a, anyhow::Result<ChainReport>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        let (head_seq, head_hash, head_mac) = fiscus_store::audit::head(&mut conn, workspace_id).await?;
        let mut verifier = ChainVerifier::new(store.seal_key().clone());
        let report = |verifier: &ChainVerifier, result| ChainReport {
            workspace_id: workspace_id.into(),
            events: verifier.verified(),
            result,
        };
        let mut hash_at_anchor: Option<String> = None;
        loop {
            let page = fiscus_store::audit::events_after(&mut conn, workspace_id, verifier.verified(), PAGE).await?;
            if page.is_empty() {
                break;
            }
            for stored in &page {
                if let Err(b) = verifier.push(&stored.event, &stored.hash, stored.mac.as_deref()) {
                    return Ok(report(&verifier, Err(b)));
                }
                if anchor.is_some_and(|a| a.seq == stored.event.seq) {
                    hash_at_anchor = Some(stored.hash.clone());
                }
            }
        }
        let mut result = verifier.finish(workspace_id, head_seq, &head_hash, head_mac.as_deref()).map(|_| ());
        if let (Ok(()), Some(anchor)) = (&result, anchor) {
            result = check_anchor(anchor, verifier.verified(), hash_at_anchor.as_deref());
        }
        Ok(report(&verifier, result))
    })
}

/// The anchors this node keeps (none yet on a fresh deployment).
pub fn anchors(settings: &crate::Settings, store: &Store) -> anyhow::Result<BTreeMap<String, Anchor>> {
    Ok(crate::anchor::read(&settings.audit_anchor_path(), store.seal_key())?.unwrap_or_default())
}

/// Checks every sealed business row of a workspace; returns how many were read and those that fail.
pub fn verify_records<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<(u64, Vec<Unsealed>)>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        Ok(fiscus_store::sealed_tables::verify_workspace(&mut conn, store.seal_key(), workspace_id).await?)
    })
}

/// Recomputes every action's public envelope hash from its row (both environments of the workspace), as
/// anyone holding the rows could; returns how many were checked and the ids whose stored hash differs.
pub fn verify_envelopes<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<(u64, Vec<String>)>> {
    Box::pin(async move {
        use fiscus_domain::credentials::Environment;
        let mut conn = store.read().await?;
        let (mut checked, mut altered) = (0u64, Vec::new());
        for environment in [Environment::Sandbox, Environment::Production] {
            let tenant = fiscus_domain::tenancy::Tenant { workspace_id: workspace_id.to_string(), environment };
            let mut after: Option<String> = None;
            loop {
                let rows = fiscus_store::actions::list_each(&mut conn, &tenant, after.as_deref(), 100).await?;
                for (id, action) in rows.iter().take(100) {
                    checked += 1;
                    // A row whose stored values the code does not recognise cannot hash to its seal either.
                    let intact = action.as_ref().is_ok_and(|a| {
                        a.envelope.hash(id, workspace_id, environment.as_str()).as_deref()
                            == Some(a.envelope_hash.as_str())
                    });
                    if !intact {
                        altered.push(id.clone());
                    }
                }
                if rows.len() <= 100 {
                    break;
                }
                after = rows.get(99).map(|(id, _)| id.clone());
            }
        }
        Ok((checked, altered))
    })
}

pub fn describe(b: &ChainBreak) -> String {
    match b {
        ChainBreak::ContentAltered { seq } => {
            format!("event {seq} was altered: its stored hash does not match its content")
        }
        ChainBreak::LinkBroken { seq } => {
            format!("event {seq} does not link to its predecessor's hash (an earlier event was altered or removed)")
        }
        ChainBreak::SequenceGap { expected, found } => {
            format!("expected event {expected}, found {found} (events removed or inserted)")
        }
        ChainBreak::HeadMismatch { head_seq, last_seq } => {
            format!("the head says {head_seq} events but the chain ends at {last_seq}")
        }
        ChainBreak::NotAuthenticated { seq } => {
            format!("event {seq} does not carry a valid MAC: it was written or rewritten without the server key")
        }
        ChainBreak::HeadNotAuthenticated { head_seq } => {
            format!("the head (event {head_seq}) does not carry a valid MAC: it was moved without the server key")
        }
        ChainBreak::BehindAnchor { anchored_seq, last_seq } => format!(
            "the chain ends at event {last_seq} but event {anchored_seq} was anchored outside the database: events were removed or replaced"
        ),
    }
}

pub fn describe_unsealed(u: &Unsealed) -> String {
    if u.missing {
        format!("{} {} carries no seal MAC", u.table, u.id)
    } else {
        format!("{} {} does not match its seal: it was changed outside Fiscus", u.table, u.id)
    }
}

/// Recomputes every dataset's content hash from its stored rows and checks its seal; returns how many
/// were checked and the numbers of those that fail.
pub fn verify_datasets<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, anyhow::Result<(u64, Vec<i64>)>> {
    Box::pin(async move {
        let mut conn = store.read().await?;
        let datasets = fiscus_store::data::datasets::all(&mut conn, store.seal_key(), workspace_id).await?;
        let mut failing = Vec::new();
        for d in &datasets {
            match fiscus_store::data::datasets::verify(&mut conn, store.seal_key(), workspace_id, d).await {
                Ok(()) => {}
                Err(fiscus_store::StoreError::Tampered(_)) => failing.push(d.number),
                Err(e) => return Err(e.into()),
            }
        }
        Ok((datasets.len() as u64, failing))
    })
}
