//! The server's secret key: the HMAC key for stored credential hashes (and, later, the AEAD key for stored
//! secrets). It lives outside the database so that a copy of the database alone cannot test guessed keys.

use anyhow::Context;
use std::path::Path;

/// Where the key came from, for the posture read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// A key file created by this node on first run.
    Generated,
    /// A key file that already existed (provisioned by the operator or kept from an earlier run).
    File,
}

/// Loads the key file, creating it with 32 random bytes (mode 0600) when it does not exist.
pub fn load_or_create(path: &Path) -> anyhow::Result<(Vec<u8>, KeySource)> {
    if path.exists() {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading secret key {}", path.display()))?;
        let key = decode_hex(text.trim()).with_context(|| format!("secret key {} is not hex", path.display()))?;
        anyhow::ensure!(key.len() >= 32, "secret key {} must hold at least 32 bytes", path.display());
        return Ok((key, KeySource::File));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut key = vec![0u8; 32];
    use rand::RngCore;
    rand::rngs::OsRng.fill_bytes(&mut key);
    let text = fiscus_domain::evidence::hex(&key);
    write_private(path, &text).with_context(|| format!("writing secret key {}", path.display()))?;
    Ok((key, KeySource::Generated))
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}
