//! The model hub: a content-addressed store of published artifacts inside the data directory
//! (`<data_dir>/model-hub/sha256/<first two hex digits>/<hex>`). A file's name is the SHA-256 of its bytes,
//! so a file is written once, never changed, and checking one is recomputing its name. A publication
//! records each artifact's hash and size; `fiscus verify models` reads every one back.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The hub of a data directory.
#[derive(Clone, Debug)]
pub struct Hub {
    root: PathBuf,
}

/// What is wrong with a stored artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Missing,
    /// Its bytes no longer hash to its name, or it changed size.
    Altered,
}

impl Hub {
    pub fn in_data_dir(data_dir: &Path) -> Hub {
        Hub { root: data_dir.join("model-hub") }
    }

    /// Where the artifact of `sha256` (`sha256:` and 64 hex digits) lives; `None` for anything else.
    pub fn path(&self, sha256: &str) -> Option<PathBuf> {
        let hex = sha256.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return None;
        }
        Some(self.root.join("sha256").join(&hex[..2]).join(hex))
    }

    /// Stores `bytes` durably (written to a temporary file, synced, renamed into place, the folder synced)
    /// and returns their `sha256:`; bytes stored already are left as they are.
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let sha = fiscus_domain::evidence::seal_bytes(bytes);
        let path = self.path(&sha).ok_or_else(|| std::io::Error::other("a hash is not a hub address"))?;
        if self.check(&sha, bytes.len() as u64).is_ok() {
            return Ok(sha);
        }
        let folder = path.parent().ok_or_else(|| std::io::Error::other("a hub path has no folder"))?;
        std::fs::create_dir_all(folder)?;
        let temporary = folder.join(format!(".{}.tmp", fiscus_domain::ids::new_id("hub")));
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, &path)?;
        std::fs::File::open(folder)?.sync_all()?;
        Ok(sha)
    }

    /// Reads an artifact back and checks it against its name and size.
    pub fn check(&self, sha256: &str, size: u64) -> Result<(), Fault> {
        let path = self.path(sha256).ok_or(Fault::Altered)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Fault::Missing),
            Err(_) => return Err(Fault::Altered),
        };
        if bytes.len() as u64 != size || fiscus_domain::evidence::seal_bytes(&bytes) != sha256 {
            return Err(Fault::Altered);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_artifact_is_its_hash_and_an_altered_one_is_found() {
        let dir = tempfile::tempdir().expect("dir");
        let hub = Hub::in_data_dir(dir.path());
        let sha = hub.put(b"{\"a\":1}").expect("put");
        assert_eq!(sha, fiscus_domain::evidence::seal_bytes(b"{\"a\":1}"));
        assert_eq!(hub.put(b"{\"a\":1}").expect("again"), sha);
        assert_eq!(hub.check(&sha, 7), Ok(()));
        assert_eq!(hub.check(&sha, 8), Err(Fault::Altered));
        let path = hub.path(&sha).expect("path");
        std::fs::write(&path, b"{\"a\":2}").expect("tamper");
        assert_eq!(hub.check(&sha, 7), Err(Fault::Altered));
        std::fs::remove_file(&path).expect("remove");
        assert_eq!(hub.check(&sha, 7), Err(Fault::Missing));
        assert_eq!(hub.path("sha256:../../etc/passwd"), None);
    }
}
