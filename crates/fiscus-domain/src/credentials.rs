//! Credential secrets: API keys, OAuth client secrets and access tokens.
//!
//! Every secret has the shape `<prefix><lookup><secret><checksum>`:
//! - `prefix` says what it is (`svc_test_`, `svc_live_`, `fcs_`, `fat_`), so secret scanners and people can
//!   tell a sandbox key from a production one at a glance;
//! - `lookup` (12 base62 characters) is a public index, so the store finds the row without comparing hashes
//!   in SQL;
//! - `secret` (32 base62 characters) carries the entropy (together with `lookup`, about 256 bits);
//! - `checksum` (6 base62 characters, CRC32 of everything before it) lets a scanner, or Fiscus before any
//!   database work, discard strings that cannot be real secrets.
//!
//! Only a keyed hash (HMAC-SHA256 under the server's secret key) is stored, and the comparison is constant
//! time. A stolen database therefore yields neither the secrets nor a way to test guesses offline.

use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::evidence::hex;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
pub const LOOKUP_LEN: usize = 12;
const SECRET_LEN: usize = 32;
const CHECKSUM_LEN: usize = 6;
const BODY_LEN: usize = LOOKUP_LEN + SECRET_LEN + CHECKSUM_LEN;

/// The environment a credential and every object belong to. Sandbox and production never see each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    Sandbox,
    Production,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }

    pub fn parse(s: &str) -> Option<Environment> {
        match s {
            "sandbox" => Some(Environment::Sandbox),
            "production" => Some(Environment::Production),
            _ => None,
        }
    }

    pub fn api_key_kind(self) -> SecretKind {
        match self {
            Environment::Sandbox => SecretKind::SandboxApiKey,
            Environment::Production => SecretKind::ProductionApiKey,
        }
    }
}

/// An application's standing. Only `active` applications authenticate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppStatus {
    Active,
    Suspended,
    Revoked,
}

impl AppStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AppStatus::Active => "active",
            AppStatus::Suspended => "suspended",
            AppStatus::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Option<AppStatus> {
        match s {
            "active" => Some(AppStatus::Active),
            "suspended" => Some(AppStatus::Suspended),
            "revoked" => Some(AppStatus::Revoked),
            _ => None,
        }
    }
}

/// A credential's own standing. An API key is active until rotated (a newer key of its application replaced
/// it) or revoked; an OAuth access token is active until revoked (its expiry is a time, not a status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CredentialStatus {
    Active,
    Rotated,
    Revoked,
}

impl CredentialStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialStatus::Active => "active",
            CredentialStatus::Rotated => "rotated",
            CredentialStatus::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Option<CredentialStatus> {
        match s {
            "active" => Some(CredentialStatus::Active),
            "rotated" => Some(CredentialStatus::Rotated),
            "revoked" => Some(CredentialStatus::Revoked),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretKind {
    SandboxApiKey,
    ProductionApiKey,
    ClientSecret,
    AccessToken,
    /// One-time operator enrollment link token (human plane).
    EnrollmentToken,
    /// Console session token, carried only in an HttpOnly cookie (human plane).
    SessionToken,
}

impl SecretKind {
    pub const ALL: [SecretKind; 6] = [
        SecretKind::SandboxApiKey,
        SecretKind::ProductionApiKey,
        SecretKind::ClientSecret,
        SecretKind::AccessToken,
        SecretKind::EnrollmentToken,
        SecretKind::SessionToken,
    ];

    pub fn prefix(self) -> &'static str {
        match self {
            SecretKind::SandboxApiKey => "svc_test_",
            SecretKind::ProductionApiKey => "svc_live_",
            SecretKind::ClientSecret => "fcs_",
            SecretKind::AccessToken => "fat_",
            SecretKind::EnrollmentToken => "fen_",
            SecretKind::SessionToken => "fse_",
        }
    }
}

/// A freshly minted secret. `full` is shown to its owner once and never stored.
pub struct MintedSecret {
    pub kind: SecretKind,
    pub full: String,
    pub lookup: String,
}

impl MintedSecret {
    /// A display hint that identifies the secret without revealing it: prefix, lookup and last 4 characters.
    pub fn hint(&self) -> String {
        hint_of(&self.full, self.kind)
    }
}

pub fn hint_of(full: &str, kind: SecretKind) -> String {
    let body = &full[kind.prefix().len()..];
    format!("{}{}…{}", kind.prefix(), &body[..LOOKUP_LEN.min(body.len())], &full[full.len().saturating_sub(4)..])
}

/// Mints a new secret of `kind` from the operating system's CSPRNG.
pub fn mint(kind: SecretKind) -> MintedSecret {
    let mut rng = rand::rngs::OsRng;
    let mut chars = String::with_capacity(LOOKUP_LEN + SECRET_LEN);
    while chars.len() < LOOKUP_LEN + SECRET_LEN {
        let mut buf = [0u8; 64];
        rng.fill_bytes(&mut buf);
        // Rejection sampling keeps every character uniform over the 62 symbols (248 = 4 × 62).
        for b in buf {
            if b < 248 && chars.len() < LOOKUP_LEN + SECRET_LEN {
                chars.push(BASE62[(b % 62) as usize] as char);
            }
        }
    }
    let mut full = String::with_capacity(kind.prefix().len() + BODY_LEN);
    full.push_str(kind.prefix());
    full.push_str(&chars);
    let checksum = checksum(&full);
    full.push_str(&checksum);
    MintedSecret { kind, lookup: chars[..LOOKUP_LEN].to_string(), full }
}

/// A presented secret whose shape and checksum are right. It still has to match a stored hash.
#[derive(Debug, PartialEq, Eq)]
pub struct ParsedSecret<'a> {
    pub kind: SecretKind,
    pub lookup: &'a str,
    pub full: &'a str,
}

/// Recognises a presented secret. Anything of the wrong shape, or whose checksum fails, is `None` and is
/// refused without touching the database.
pub fn parse(presented: &str) -> Option<ParsedSecret<'_>> {
    let kind = SecretKind::ALL.into_iter().find(|k| presented.starts_with(k.prefix()))?;
    let body = &presented[kind.prefix().len()..];
    if body.len() != BODY_LEN || !body.bytes().all(|b| BASE62.contains(&b)) {
        return None;
    }
    let (head, sum) = presented.split_at(presented.len() - CHECKSUM_LEN);
    if checksum(head) != sum {
        return None;
    }
    Some(ParsedSecret { kind, lookup: &body[..LOOKUP_LEN], full: presented })
}

fn checksum(s: &str) -> String {
    let mut value = crc32fast::hash(s.as_bytes());
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(value % 62) as usize];
        value /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The keyed hash stored for a secret: hex HMAC-SHA256 under the server's secret key.
pub fn keyed_hash(server_key: &[u8], secret: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(server_key).expect("HMAC accepts keys of any length");
    mac.update(secret.as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// Constant-time check of a presented secret against its stored keyed hash.
pub fn verify(server_key: &[u8], presented: &str, stored_hash: &str) -> bool {
    let computed = keyed_hash(server_key, presented);
    computed.as_bytes().ct_eq(stored_hash.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_secrets_parse_and_verify() {
        for kind in SecretKind::ALL {
            let minted = mint(kind);
            let parsed = parse(&minted.full).expect("parses");
            assert_eq!(parsed.kind, kind);
            assert_eq!(parsed.lookup, minted.lookup);
            let key = b"server key";
            let stored = keyed_hash(key, &minted.full);
            assert!(verify(key, &minted.full, &stored));
            assert!(!verify(b"other key", &minted.full, &stored));
        }
    }

    #[test]
    fn a_changed_character_fails_the_checksum() {
        let minted = mint(SecretKind::SandboxApiKey);
        let mut bytes = minted.full.clone().into_bytes();
        let i = SecretKind::SandboxApiKey.prefix().len() + 20;
        bytes[i] = if bytes[i] == b'a' { b'b' } else { b'a' };
        let altered = String::from_utf8(bytes).expect("ascii");
        assert!(parse(&altered).is_none());
        assert!(parse("svc_test_short").is_none());
        assert!(parse("Bearer nonsense").is_none());
        assert!(parse("").is_none());
    }

    #[test]
    fn the_hint_reveals_no_secret_part() {
        let minted = mint(SecretKind::ProductionApiKey);
        let hint = minted.hint();
        assert!(hint.starts_with("svc_live_"));
        assert!(!hint.contains(&minted.full[21..50]));
    }
}
