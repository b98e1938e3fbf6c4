//! Evidence sealing: `sha256:` + hex of SHA-256 over the RFC 8785 canonical form of a JSON payload.
//!
//! Anyone holding the payload can recompute the seal with a stock JCS library and `sha256sum`; nothing
//! Fiscus-specific is needed. A sealed record is never rewritten: a correction is a new record.

use crate::jcs::{JcsError, canonicalize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The prefix every seal carries, so a reader knows the algorithm without a side channel.
pub const SEAL_PREFIX: &str = "sha256:";

/// `sha256:<hex>` of the canonical form of `payload`.
pub fn seal(payload: &Value) -> Result<String, JcsError> {
    Ok(seal_bytes(canonicalize(payload)?.as_bytes()))
}

/// `sha256:<hex>` of raw bytes (used where the sealed thing is already bytes, e.g. a transcript).
pub fn seal_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(SEAL_PREFIX.len() + 64);
    out.push_str(SEAL_PREFIX);
    out.push_str(&hex(&digest));
    out
}

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xf) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seal_is_sha256_of_the_canonical_form() {
        // sha256 of the 7 bytes `{"a":1}`, computed independently with `printf '{"a":1}' | sha256sum`.
        let expected = "sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862";
        assert_eq!(seal(&json!({ "a": 1 })).expect("seal"), expected);
        assert_eq!(seal(&json!({ "a": 1.0 })).expect("seal"), expected);
    }

    #[test]
    fn member_order_does_not_change_the_seal() {
        let a: Value = serde_json::from_str(r#"{"x":[1,2],"y":"z"}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{ "y" : "z", "x" : [1.0, 2] }"#).expect("json");
        assert_eq!(seal(&a).expect("seal"), seal(&b).expect("seal"));
    }
}
