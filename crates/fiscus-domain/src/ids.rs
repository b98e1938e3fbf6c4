//! Prefixed, sortable object identifiers (`act_…`, `app_…`, `req_…`).
//!
//! The body is a UUIDv7 written in Crockford base32 (26 characters). UUIDv7 starts with a millisecond
//! timestamp, and Crockford's alphabet is in ASCII order, so identifiers of one kind sort by creation time as
//! plain strings. That is what makes `after_id` cursors stable on both backends.

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A new identifier `prefix_BODY`.
pub fn new_id(prefix: &str) -> String {
    let bytes = uuid::Uuid::now_v7().into_bytes();
    let mut out = String::with_capacity(prefix.len() + 27);
    out.push_str(prefix);
    out.push('_');
    encode_crockford(&bytes, &mut out);
    out
}

/// Encodes 16 bytes (128 bits) as 26 Crockford base32 characters, most significant bits first. The first
/// character carries only 3 bits (128 = 3 + 25 × 5).
fn encode_crockford(bytes: &[u8; 16], out: &mut String) {
    let value = u128::from_be_bytes(*bytes);
    for i in (0..26).rev() {
        let index = ((value >> (i * 5)) & 0x1f) as usize;
        out.push(CROCKFORD[index] as char);
    }
}

/// True when `id` has the given prefix followed by a well-formed 26-character body. Used to reject path
/// identifiers of the wrong kind before they reach the store.
pub fn is_id_of(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|body| body.len() == 26 && body.bytes().all(|b| CROCKFORD.contains(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_their_prefix_and_sort_by_creation() {
        let a = new_id("act");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_id("act");
        assert!(is_id_of("act", &a));
        assert!(!is_id_of("dlg", &a));
        assert_eq!(a.len(), 30);
        assert!(a < b, "{a} should sort before {b}");
    }

    #[test]
    fn malformed_ids_are_rejected() {
        assert!(!is_id_of("act", "act_"));
        assert!(!is_id_of("act", "act_0123456789ABCDEFGHJKMNPQ!"));
        assert!(!is_id_of("act", "act_0123456789abcdefghjkmnpqr"));
    }
}
