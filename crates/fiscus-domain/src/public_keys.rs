//! Ed25519 public keys as clients send them (32 bytes, standard base64): the machine identities that sign a
//! delegated execution's authority and the execution clients that sign their requests both carry one.

use base64::Engine;
use ed25519_dalek::VerifyingKey;

/// An Ed25519 public key, decoded (its curve point decompressed) and ready to verify with.
pub type PublicKey = VerifyingKey;

/// 32 bytes in standard base64, whether or not they are a curve point.
pub fn public_key_bytes(b64: &str) -> bool {
    base64::engine::general_purpose::STANDARD.decode(b64).is_ok_and(|b| b.len() == 32)
}

pub fn decode_public_key(b64: &str) -> Option<VerifyingKey> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let array: [u8; 32] = bytes.try_into().ok()?;
    VerifyingKey::from_bytes(&array).ok()
}
