//! Rate limits (fixed windows): per application on the API (all its keys and tokens share one quota), and
//! per client id and per address at the token endpoint. API responses carry the IETF RateLimit header
//! fields: `RateLimit-Policy: "<class>";q=<quota>;w=<window>` and `RateLimit: "<class>";r=<remaining>;t=<reset>`.
//!
//! Counters live in the node's memory: with several nodes behind a balancer each node enforces the quota
//! on the requests it serves. That is the documented trade-off for not writing to the database on every
//! request; governed limits that must be exact (budgets, quotas on money) live in the store.

use fiscus_kernel::settings::ServiceClass;
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, Window>>,
}

struct Window {
    started_at: u64,
    count: u64,
}

/// The outcome of counting one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub remaining: u64,
    /// Seconds until the window resets.
    pub reset_in: u64,
}

impl RateLimiter {
    /// Counts a request in `bucket` at `now` (seconds) against `class`.
    pub fn check(&self, bucket: &str, class: &ServiceClass, now: u64) -> Decision {
        let window = class.window_seconds.max(1);
        let start = now - now % window;
        let reset_in = start + window - now;
        let mut windows = self.windows.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if windows.len() > 100_000 {
            // Forget windows that have ended so idle credentials do not accumulate.
            windows.retain(|_, w| w.started_at + window > now);
        }
        let entry = windows.entry(bucket.to_string()).or_insert(Window { started_at: start, count: 0 });
        if entry.started_at != start {
            entry.started_at = start;
            entry.count = 0;
        }
        if entry.count >= class.quota {
            return Decision { allowed: false, remaining: 0, reset_in };
        }
        entry.count += 1;
        Decision { allowed: true, remaining: class.quota - entry.count, reset_in }
    }
}

pub fn policy_header(class_name: &str, class: &ServiceClass) -> String {
    format!("\"{class_name}\";q={};w={}", class.quota, class.window_seconds)
}

pub fn state_header(class_name: &str, decision: &Decision) -> String {
    format!("\"{class_name}\";r={};t={}", decision.remaining, decision.reset_in)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_the_quota_until_the_window_resets() {
        let limiter = RateLimiter::default();
        let class = ServiceClass { quota: 2, window_seconds: 60 };
        assert_eq!(limiter.check("k", &class, 120), Decision { allowed: true, remaining: 1, reset_in: 60 });
        assert!(limiter.check("k", &class, 130).allowed);
        let refused = limiter.check("k", &class, 170);
        assert!(!refused.allowed);
        assert_eq!(refused.reset_in, 10);
        assert!(limiter.check("other", &class, 170).allowed, "credentials are counted apart");
        assert!(limiter.check("k", &class, 180).allowed, "a new window starts afresh");
    }
}
