//! Operator passwords: Argon2id (argon2 crate defaults: m = 19 MiB, t = 2, p = 1, the OWASP baseline).

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

pub const MIN_LENGTH: usize = 12;
pub const MAX_LENGTH: usize = 128;

pub fn acceptable(password: &str) -> Result<(), String> {
    let n = password.chars().count();
    if !(MIN_LENGTH..=MAX_LENGTH).contains(&n) {
        return Err(format!("A password must be {MIN_LENGTH} to {MAX_LENGTH} characters."));
    }
    Ok(())
}

pub fn hash(password: &str) -> Option<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).ok().map(|h| h.to_string())
}

/// Verifies against a stored PHC string; an unreadable hash verifies nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}

/// Spends the same effort as a real verification when there is no account, so response times do not tell
/// which e-mail addresses exist.
pub fn verify_dummy(password: &str) {
    static DUMMY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(stored) = DUMMY.get_or_init(|| hash("not a real password, only for timing")) {
        let _ = verify(password, stored);
    }
}
