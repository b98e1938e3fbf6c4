//! What anyone holding the rows can check of Financial Actions without the server's key: each action's
//! public envelope hash recomputed from its row (`fiscus verify audit` runs it beside the kernel's checks of
//! the audit chain and the seals).

use fiscus_store::Store;

/// Recomputes every action's public envelope hash from its row (both environments of the workspace), as
/// anyone holding the rows could; returns how many were checked and the ids whose stored hash differs.
pub fn verify_envelopes<'a>(
    store: &'a Store,
    workspace_id: &'a str,
) -> fiscus_store::Boxed<'a, fiscus_store::Result<(u64, Vec<String>)>> {
    Box::pin(async move {
        use fiscus_domain::credentials::Environment;
        let mut conn = store.read().await?;
        let (mut checked, mut altered) = (0u64, Vec::new());
        for environment in [Environment::Sandbox, Environment::Production] {
            let tenant = fiscus_domain::tenancy::Tenant { workspace_id: workspace_id.to_string(), environment };
            let mut after: Option<String> = None;
            loop {
                let rows = crate::tables::actions::list_each(&mut conn, &tenant, after.as_deref(), 100).await?;
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
