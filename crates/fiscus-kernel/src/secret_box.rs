//! Encryption of secrets Fiscus must be able to read back (operators' TOTP secrets, later webhook signing
//! secrets): XChaCha20-Poly1305 under a key derived from the server key, with the owning record's id as
//! associated data so a ciphertext cannot be moved to another record.

use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

pub struct SecretBox {
    cipher: XChaCha20Poly1305,
}

impl SecretBox {
    /// Derives the encryption key from the server key (HMAC-SHA256 with a fixed label), so the raw server
    /// key is used for one purpose only.
    pub fn new(server_key: &[u8]) -> SecretBox {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(server_key).expect("HMAC accepts keys of any length");
        mac.update(b"fiscus/secret-box/v1");
        let key = mac.finalize().into_bytes();
        SecretBox { cipher: XChaCha20Poly1305::new(&key) }
    }

    /// `v1.` + base64(nonce ‖ ciphertext).
    pub fn seal(&self, plaintext: &[u8], associated: &str) -> Option<String> {
        let mut nonce = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let ciphertext = self
            .cipher
            .encrypt(XNonce::from_slice(&nonce), Payload { msg: plaintext, aad: associated.as_bytes() })
            .ok()?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&ciphertext);
        Some(format!("v1.{}", base64::engine::general_purpose::STANDARD_NO_PAD.encode(out)))
    }

    pub fn open(&self, sealed: &str, associated: &str) -> Option<Vec<u8>> {
        let bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(sealed.strip_prefix("v1.")?).ok()?;
        if bytes.len() < 24 + 16 {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(24);
        self.cipher.decrypt(XNonce::from_slice(nonce), Payload { msg: ciphertext, aad: associated.as_bytes() }).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens_only_with_the_same_key_and_record() {
        let a = SecretBox::new(b"server key one, at least 32 bytes!!");
        let sealed = a.seal(b"totp secret", "opr_1").expect("seal");
        assert_eq!(a.open(&sealed, "opr_1").as_deref(), Some(&b"totp secret"[..]));
        assert_eq!(a.open(&sealed, "opr_2"), None, "bound to its record");
        let b = SecretBox::new(b"another server key, 32 bytes long!!");
        assert_eq!(b.open(&sealed, "opr_1"), None);
    }
}
