//! RFC 6238 time-based one-time passwords (HMAC-SHA1, 30-second steps, 6 digits: what authenticator apps
//! expect by default), checked against the RFC's published test vectors.

use hmac::{Hmac, Mac};
use sha1::Sha1;

pub const STEP_SECONDS: i64 = 30;
pub const DIGITS: u32 = 6;

/// The HOTP value (RFC 4226) of `secret` at `counter`.
pub fn hotp(secret: &[u8], counter: u64, digits: u32) -> u32 {
    let mut mac = Hmac::<Sha1>::new_from_slice(secret).expect("HMAC accepts keys of any length");
    mac.update(&counter.to_be_bytes());
    let digest = mac.finalize().into_bytes();
    let offset = (digest[19] & 0x0f) as usize;
    let binary = (u32::from(digest[offset]) & 0x7f) << 24
        | u32::from(digest[offset + 1]) << 16
        | u32::from(digest[offset + 2]) << 8
        | u32::from(digest[offset + 3]);
    binary % 10u32.pow(digits)
}

/// The TOTP code at Unix time `unix_seconds`, zero-padded.
pub fn code_at(secret: &[u8], unix_seconds: i64) -> String {
    let counter = (unix_seconds.max(0) / STEP_SECONDS) as u64;
    format!("{:0width$}", hotp(secret, counter, DIGITS), width = DIGITS as usize)
}

/// Verifies `code` at `unix_seconds`, accepting one step of clock drift either way, and refusing any step
/// at or before `last_used_step` (a code is good once). Returns the step that matched.
pub fn verify(secret: &[u8], code: &str, unix_seconds: i64, last_used_step: Option<i64>) -> Option<i64> {
    if code.len() != DIGITS as usize || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let now_step = unix_seconds.max(0) / STEP_SECONDS;
    for step in [now_step - 1, now_step, now_step + 1] {
        if step < 0 || last_used_step.is_some_and(|last| step <= last) {
            continue;
        }
        let expected = format!("{:0width$}", hotp(secret, step as u64, DIGITS), width = DIGITS as usize);
        if subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), code.as_bytes()).into() {
            return Some(step);
        }
    }
    None
}

const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// RFC 4648 base32 without padding, the form authenticator apps take.
pub fn base32(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut buffer: u32 = 0;
    let mut bits = 0;
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            out.push(BASE32[((buffer >> (bits - 5)) & 31) as usize] as char);
            bits -= 5;
        }
    }
    if bits > 0 {
        out.push(BASE32[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The `otpauth://` URI authenticator apps import.
pub fn otpauth_uri(issuer: &str, account: &str, secret: &[u8]) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~@".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect::<String>()
    };
    format!(
        "otpauth://totp/{}:{}?secret={}&issuer={}&algorithm=SHA1&digits={DIGITS}&period={STEP_SECONDS}",
        enc(issuer),
        enc(account),
        base32(secret),
        enc(issuer)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 Appendix B, SHA-1 rows (8 digits), secret "12345678901234567890".
    #[test]
    fn matches_the_rfc6238_test_vectors() {
        let secret = b"12345678901234567890";
        for (t, expected) in [
            (59, 94287082),
            (1111111109, 7081804),
            (1111111111, 14050471),
            (1234567890, 89005924),
            (2000000000, 69279037),
            (20_000_000_000i64, 65353130),
        ] {
            assert_eq!(hotp(secret, (t / 30) as u64, 8), expected, "t = {t}");
        }
    }

    #[test]
    fn a_code_is_good_once_and_within_one_step() {
        let secret = b"12345678901234567890";
        let code = code_at(secret, 1_000_000);
        let step = verify(secret, &code, 1_000_000, None).expect("valid");
        assert_eq!(verify(secret, &code, 1_000_000, Some(step)), None, "replay refused");
        assert!(verify(secret, &code, 1_000_000 + 30, None).is_some(), "one step of drift");
        assert!(verify(secret, &code, 1_000_000 + 90, None).is_none());
        assert!(verify(secret, "12345", 1_000_000, None).is_none());
    }

    #[test]
    fn base32_follows_rfc4648() {
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
        assert_eq!(base32(b"f"), "MY");
    }
}
