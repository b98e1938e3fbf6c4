//! The bank's drop folder: what the bank (or the system or team that carries its files) drops in
//! `<inbound>/<workspace>/<environment>/*.xml` is imported as if it had been posted to
//! `POST /bank-messages` (`crate::bank_messages::import`), then moved aside. Nothing there is trusted
//! (issue 54): the folder is walked by descriptor without following a link (`fiscus_kernel::folder`), and
//! a refusal's reason names the file and the rule it broke, never what the file holds unless it is a bank
//! message.

use fiscus_domain::tenancy::Tenant;
use fiscus_kernel::Services;
use fiscus_kernel::folder::{self, Folder, Kind};
use fiscus_kernel::governed::{Caller, Failure};

use crate::bank_messages::{import, refusal};

/// Reads what the bank dropped in the inbound directory, `<inbound>/<workspace>/<environment>/*.xml` (drop
/// files whole: write them elsewhere and rename them in). Each file read is moved to `processed/` beside
/// it; one refused (not a message Fiscus reads, a statement that does not add up, a report on no file of
/// the workspace) to `refused/`, with the reason in `<name>.reason`. Returns how many files it took.
///
/// Nothing there is trusted (whoever may drop files for the bank is not whoever may read Fiscus's
/// secrets): every folder and file is reached by descriptor without following a link
/// (`fiscus_kernel::folder`), a link or anything but a regular file is refused unread, a file past
/// `inbound_max_bytes` is refused after reading no more than that, and a reason names the file and the rule
/// it broke, never what it holds unless it is a bank message.
pub async fn import_inbound(services: &Services, worker: &str) -> Result<usize, Failure> {
    let Some(cfg) = services.settings.iso20022.as_ref() else { return Ok(0) };
    let Some(dir) = cfg.inbound_dir.clone() else { return Ok(0) };
    let cap = cfg.inbound_max_bytes;
    let found = tokio::task::spawn_blocking(move || dropped(&dir))
        .await
        .map_err(|e| Failure::internal(format!("inbound directory: {e}")))?
        .map_err(|e| Failure::internal(format!("inbound directory: {e}")))?;
    let caller = Caller::bare(fiscus_domain::actor::Actor::worker(worker));
    let mut taken = 0;
    for (tenant, folder, name) in found {
        let (f, n) = (folder.clone(), name.clone());
        let read = tokio::task::spawn_blocking(move || f.read_bounded(&n, cap))
            .await
            .map_err(|e| Failure::internal(format!("inbound directory: {e}")))?;
        let refusal = match read {
            Err(folder::Refused::Gone) => continue,
            Err(refused) => Some(refused.rule()),
            Ok(bytes) => match String::from_utf8(bytes) {
                Err(_) => Some("the file is not UTF-8 text".to_string()),
                // Only a document that is a bank message has its own words quoted back (an amount, a
                // message id): anything else is named by the rule it broke.
                Ok(xml) if fiscus_iso20022::message_of(&xml).is_err() => {
                    Some("not an ISO 20022 message Fiscus reads (pain.002, camt.053 or camt.054)".into())
                }
                Ok(xml) => {
                    let mut conn = services.store.read().await?;
                    let known = fiscus_store::workspaces::get(&mut conn, &tenant.workspace_id).await;
                    drop(conn);
                    match known {
                        Err(fiscus_store::StoreError::NotFound) => {
                            Some("no workspace has this directory's name".into())
                        }
                        Err(e) => return Err(e.into()),
                        Ok(_) => match import(services, &tenant, &caller, &xml).await.map_err(refusal) {
                            Ok(_) => None,
                            Err(Ok(why)) => Some(why),
                            // Not the message's fault (a record it names failing its seal, the database):
                            // the file stays for the next pass and holds back no other file (issue 54).
                            Err(Err(e)) => {
                                let path = folder.path().join(&name);
                                warn_once(&path, &format!("not imported now, tried again at each pass: {e:?}"));
                                continue;
                            }
                        },
                    }
                }
            },
        };
        let path = folder.path().join(&name);
        if let Some(reason) = &refusal {
            tracing::warn!(file = %path.display(), reason = %reason, "bank message refused");
        }
        let moved = tokio::task::spawn_blocking(move || set_aside(&folder, &name, refusal.as_deref()))
            .await
            .map_err(|e| Failure::internal(format!("inbound directory: {e}")))?;
        match moved {
            Ok(()) => taken += 1,
            // A folder that cannot take it (its `refused/` a link, say) must not stop every other
            // workspace's messages: the file stays, and importing it again changes nothing.
            Err(e) => warn_once(&path, &format!("could not be set aside: {e}")),
        }
    }
    Ok(taken)
}

/// The `*.xml` entries waiting in each workspace's and environment's inbound folder, by name, with the
/// folder they are in. A workspace or environment folder that is a link is skipped (and said once).
fn dropped(dir: &std::path::Path) -> std::io::Result<Vec<(Tenant, std::sync::Arc<Folder>, String)>> {
    use fiscus_domain::credentials::Environment;
    let mut found = Vec::new();
    let Some(root) = Folder::existing_root(dir)? else { return Ok(found) };
    for (workspace_id, kind) in root.entries()? {
        if kind == Kind::File {
            continue;
        }
        let ws = match root.sub(&workspace_id) {
            Ok(Some(ws)) => ws,
            Ok(None) => continue,
            Err(e) => {
                warn_once(&dir.join(&workspace_id), &format!("not a folder Fiscus reads (never a link): {e}"));
                continue;
            }
        };
        for environment in [Environment::Sandbox, Environment::Production] {
            let env = match ws.sub(environment.as_str()) {
                Ok(Some(env)) => std::sync::Arc::new(env),
                Ok(None) => continue,
                Err(e) => {
                    let at = ws.path().join(environment.as_str());
                    warn_once(&at, &format!("not a folder Fiscus reads (never a link): {e}"));
                    continue;
                }
            };
            let tenant = Tenant { workspace_id: workspace_id.clone(), environment };
            for (name, kind) in env.entries()? {
                // `processed/` and `refused/` are folders; anything else named `*.xml` is taken or refused.
                if kind != Kind::Directory && name.ends_with(".xml") {
                    found.push((tenant.clone(), env.clone(), name));
                }
            }
        }
    }
    Ok(found)
}

/// Moves a file read to `processed/`, or a refused one to `refused/` with its reason beside it, all
/// without following a link.
fn set_aside(dir: &Folder, name: &str, refusal: Option<&str>) -> std::io::Result<()> {
    use std::io::Write as _;
    let target = dir.sub_created(if refusal.is_some() { "refused" } else { "processed" })?;
    if let Some(reason) = refusal {
        let mut f = target.create(&format!("{name}.reason"))?;
        f.write_all(reason.as_bytes())?;
    }
    match dir.rename(name, &target, name) {
        // Another node took it meanwhile (its import and this one are the same message, recorded once).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn warn_once(path: &std::path::Path, what: &str) {
    fiscus_kernel::once::warn_once(&path.display().to_string(), what);
}
