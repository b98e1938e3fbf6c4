//! The model hub: published artifacts, content-addressed in the database (`tables::model_hub`), so any
//! node serves and verifies what any node published. An artifact's name is the SHA-256 of its bytes, so it
//! is written once (in its publication's transaction), never changed, and checking one is recomputing its
//! name. A publication records each artifact's hash and size; `fiscus verify models` reads every one back.
//!
//! Before, artifacts were files in one node's data directory (`<data_dir>/model-hub/sha256/<xx>/<hex>`):
//! [`adopt`] copies the ones a node still has into the database at its start, under each workspace whose
//! publications cite them, every file checked against its name first.

use fiscus_domain::credentials::Environment;
use fiscus_domain::tenancy::Tenant;
use fiscus_store::Connection as AnyConnection;
use fiscus_store::{Store, StoreError, WriteTx};
use std::path::{Path, PathBuf};

/// What is wrong with a stored artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Missing,
    /// Its bytes no longer hash to its name, or it changed size.
    Altered,
}

/// Stores `bytes` in the writing transaction and returns their `sha256:`.
pub async fn put(tx: &mut WriteTx, workspace_id: &str, bytes: &[u8]) -> Result<String, StoreError> {
    let sha = fiscus_domain::evidence::seal_bytes(bytes);
    crate::tables::model_hub::put(tx, workspace_id, &sha, bytes).await?;
    Ok(sha)
}

/// Reads an artifact back and checks it against its name and size.
pub async fn check(
    conn: &mut AnyConnection,
    workspace_id: &str,
    sha256: &str,
    size: u64,
) -> Result<Result<(), Fault>, StoreError> {
    let Some(bytes) = crate::tables::model_hub::get(conn, workspace_id, sha256).await? else {
        return Ok(Err(Fault::Missing));
    };
    Ok(if bytes.len() as u64 != size || fiscus_domain::evidence::seal_bytes(&bytes) != sha256 {
        Err(Fault::Altered)
    } else {
        Ok(())
    })
}

/// Where a data directory's file hub kept the artifact of `sha256` (`sha256:` and 64 hex digits); `None`
/// for anything else.
pub fn legacy_path(data_dir: &Path, sha256: &str) -> Option<PathBuf> {
    let hex = sha256.strip_prefix("sha256:")?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    Some(data_dir.join("model-hub").join("sha256").join(&hex[..2]).join(hex))
}

/// Copies the artifacts of a data directory's file hub that publications cite and the database lacks into
/// the database (a node's start; nothing to do without a `model-hub` folder). A file that does not hash to
/// its name is left where it is, and `fiscus verify models` reports its artifact missing. Answers how many
/// were adopted.
pub async fn adopt(store: &Store, data_dir: &Path) -> Result<u64, StoreError> {
    if !data_dir.join("model-hub").is_dir() {
        return Ok(0);
    }
    let mut conn = store.read().await?;
    let mut missing = Vec::new();
    // Every workspace's publications: a maintenance pass at start, before any request is served.
    for w in fiscus_store::workspaces::list_all(&mut conn).await? {
        for environment in [Environment::Sandbox, Environment::Production] {
            let tenant = Tenant { workspace_id: w.id.clone(), environment };
            for p in crate::tables::lqm::supply_chain::chain(&mut conn, store.seal_key(), &tenant).await? {
                for a in &p.body.artifacts {
                    if crate::tables::model_hub::get(&mut conn, &w.id, &a.sha256).await?.is_none() {
                        missing.push((w.id.clone(), a.sha256.clone()));
                    }
                }
            }
        }
    }
    drop(conn);
    let mut adopted = 0;
    for (workspace_id, sha256) in missing {
        let Some(path) = legacy_path(data_dir, &sha256) else { continue };
        let Ok(bytes) = std::fs::read(&path) else { continue };
        if fiscus_domain::evidence::seal_bytes(&bytes) != sha256 {
            continue;
        }
        let mut tx = store.begin().await?;
        crate::tables::model_hub::put(&mut tx, &workspace_id, &sha256, &bytes).await?;
        tx.commit().await?;
        adopted += 1;
    }
    Ok(adopted)
}
