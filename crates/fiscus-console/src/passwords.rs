//! Operator passwords: Argon2id (argon2 crate defaults: m = 19 MiB, t = 2, p = 1, the OWASP baseline).
//!
//! Hashing and verifying take tens of milliseconds of a core by design, so they run on the CPU pool
//! (`fiscus_kernel::cpu`), never on the HTTP runtime; a pool that fails verifies nothing.

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use fiscus_kernel::cpu::Cpu;

pub const MIN_LENGTH: usize = 12;
pub const MAX_LENGTH: usize = 128;

pub fn acceptable(password: &str) -> Result<(), String> {
    let n = password.chars().count();
    if !(MIN_LENGTH..=MAX_LENGTH).contains(&n) {
        return Err(format!("A password must be {MIN_LENGTH} to {MAX_LENGTH} characters."));
    }
    Ok(())
}

pub async fn hash(cpu: &Cpu, password: &str) -> Option<String> {
    let password = password.to_string();
    cpu.run(move || hash_now(&password)).await.ok().flatten()
}

/// Verifies against a stored PHC string; an unreadable hash verifies nothing.
pub async fn verify(cpu: &Cpu, password: &str, stored: &str) -> bool {
    let (password, stored) = (password.to_string(), stored.to_string());
    cpu.run(move || verify_now(&password, &stored)).await.unwrap_or(false)
}

/// Spends the same effort as a real verification when there is no account, so response times do not tell
/// which e-mail addresses exist.
pub async fn verify_dummy(cpu: &Cpu, password: &str) {
    let password = password.to_string();
    let _ = cpu
        .run(move || {
            static DUMMY: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
            if let Some(stored) = DUMMY.get_or_init(|| hash_now("not a real password, only for timing")) {
                let _ = verify_now(&password, stored);
            }
        })
        .await;
}

fn hash_now(password: &str) -> Option<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).ok().map(|h| h.to_string())
}

fn verify_now(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored)
        .is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}
