//! Keyed integrity: what someone with write access to the database cannot forge.
//!
//! Seals (`sha256:` of RFC 8785 JSON) let anyone recompute a record's hash, which is their point, but it
//! also means anyone who can write the database can change a record and recompute its seal, or rewrite the
//! audit chain from an event onwards. So every audit event, every chain head and every sealed business row
//! also carries an HMAC-SHA256 under a key derived from the server key, which lives outside the database.
//! A database writer without the server key cannot produce a valid MAC; the server key holder can, and
//! that limit is stated in crates/fiscus-kernel/README.md (what seals prove).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

use crate::evidence::hex;

type HmacSha256 = Hmac<Sha256>;

/// The prefix of every MAC Fiscus stores, so a reader knows the algorithm.
pub const MAC_PREFIX: &str = "hmac-sha256:";

/// The key for integrity MACs, derived from the server key so that it is never stored beside the data.
#[derive(Clone)]
pub struct SealKey([u8; 32]);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(…)")
    }
}

/// One value of a sealed row, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Null,
    Integer(i64),
    Text(String),
}

impl SealKey {
    /// Derives the integrity key from the server key (a separate key per purpose, so a MAC of one kind can
    /// never be presented as another).
    pub fn derive(server_key: &[u8]) -> SealKey {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(server_key).expect("HMAC takes keys of any length");
        mac.update(b"fiscus-integrity-v1");
        SealKey(mac.finalize().into_bytes().into())
    }

    /// MAC over a sequence of parts; each part is length-prefixed, so no two sequences share an input.
    fn mac(&self, domain: &str, parts: &[&[u8]]) -> String {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        for part in std::iter::once(domain.as_bytes()).chain(parts.iter().copied()) {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        format!("{MAC_PREFIX}{}", hex(&mac.finalize().into_bytes()))
    }

    /// The MAC of an audit event, over its (public) chain hash, which already covers its content, its
    /// position and its predecessor.
    pub fn audit_event(&self, workspace_id: &str, seq: i64, hash: &str) -> String {
        self.mac("audit-event", &[workspace_id.as_bytes(), &seq.to_be_bytes(), hash.as_bytes()])
    }

    /// The MAC of a chain head (workspace, last sequence number, last hash).
    pub fn audit_head(&self, workspace_id: &str, seq: i64, hash: &str) -> String {
        self.mac("audit-head", &[workspace_id.as_bytes(), &seq.to_be_bytes(), hash.as_bytes()])
    }

    /// The MAC of a sealed row: its table and every sealed column's name and stored value.
    pub fn row(&self, table: &str, columns: &[(&str, Stored)]) -> String {
        let mut encoded: Vec<Vec<u8>> = Vec::with_capacity(columns.len() * 2 + 1);
        encoded.push(table.as_bytes().to_vec());
        for (name, value) in columns {
            encoded.push(name.as_bytes().to_vec());
            encoded.push(match value {
                Stored::Null => vec![0],
                Stored::Integer(i) => [&[1u8][..], &i.to_be_bytes()].concat(),
                Stored::Text(t) => [&[2u8][..], t.as_bytes()].concat(),
            });
        }
        let parts: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
        self.mac("sealed-row", &parts)
    }

    /// The MAC of a signed anchor file's content.
    pub fn anchor(&self, content: &str) -> String {
        self.mac("audit-anchor", &[content.as_bytes()])
    }
}

/// Compares a stored MAC with the expected one in constant time; a missing MAC never matches.
pub fn matches(stored: Option<&str>, expected: &str) -> bool {
    stored.is_some_and(|s| s.len() == expected.len() && bool::from(s.as_bytes().ct_eq(expected.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_depend_on_the_key_and_on_every_part() {
        let key = SealKey::derive(b"server key");
        let other = SealKey::derive(b"another server key");
        let m = key.audit_event("wsp_1", 3, "sha256:aa");
        assert!(m.starts_with(MAC_PREFIX) && m.len() == MAC_PREFIX.len() + 64);
        assert_ne!(m, other.audit_event("wsp_1", 3, "sha256:aa"));
        assert_ne!(m, key.audit_event("wsp_1", 4, "sha256:aa"));
        assert_ne!(m, key.audit_head("wsp_1", 3, "sha256:aa"), "an event MAC is not a head MAC");
        assert!(matches(Some(&m), &key.audit_event("wsp_1", 3, "sha256:aa")));
        assert!(!matches(None, &m));
    }

    #[test]
    fn row_macs_tell_values_types_and_columns_apart() {
        let key = SealKey::derive(b"k");
        let a = key.row("actions", &[("amount_minor", Stored::Integer(100)), ("reference", Stored::Text("x".into()))]);
        let b = key.row("actions", &[("amount_minor", Stored::Integer(101)), ("reference", Stored::Text("x".into()))]);
        let c = key
            .row("actions", &[("amount_minor", Stored::Text("100".into())), ("reference", Stored::Text("x".into()))]);
        let d = key.row("actions", &[("amount_minor", Stored::Integer(100)), ("reference", Stored::Null)]);
        let e = key.row("checks", &[("amount_minor", Stored::Integer(100)), ("reference", Stored::Text("x".into()))]);
        for other in [&b, &c, &d, &e] {
            assert_ne!(&a, other);
        }
    }
}
