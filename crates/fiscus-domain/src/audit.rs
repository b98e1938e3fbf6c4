//! The audit chain: per workspace, each event's hash covers its content and the previous event's hash.
//!
//! `hash = seal({workspace_id, seq, prev_hash, occurred_at, environment, actor, action, request_id, subject,
//! details})`. Changing any stored field of any event, or removing or reordering events, breaks the chain at
//! that event, and `fiscus verify audit` names it.

use crate::clock::{Micros, rfc3339};
use crate::evidence::seal;
use crate::jcs::JcsError;
use serde_json::{Value, json};

/// The `prev_hash` of a workspace's first event.
pub const GENESIS_HASH: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

/// Who did it: an application credential, the CLI operator of the machine, or (later) a console operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Actor {
    pub kind: &'static str,
    pub id: String,
}

impl Actor {
    pub fn cli() -> Actor {
        Actor { kind: "cli", id: String::from("local") }
    }

    pub fn system() -> Actor {
        Actor { kind: "system", id: String::from("fiscus") }
    }
}

/// One event as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditEvent {
    pub workspace_id: String,
    pub seq: i64,
    pub prev_hash: String,
    pub occurred_at: Micros,
    pub environment: Option<String>,
    pub actor_kind: String,
    pub actor_id: String,
    pub action: String,
    pub request_id: Option<String>,
    pub subject: Option<String>,
    pub details: Value,
}

impl AuditEvent {
    /// The payload the hash is computed over.
    pub fn payload(&self) -> Value {
        json!({
            "workspace_id": self.workspace_id,
            "seq": self.seq,
            "prev_hash": self.prev_hash,
            "occurred_at": rfc3339(self.occurred_at),
            "environment": self.environment,
            "actor": { "kind": self.actor_kind, "id": self.actor_id },
            "action": self.action,
            "request_id": self.request_id,
            "subject": self.subject,
            "details": self.details,
        })
    }

    pub fn hash(&self) -> Result<String, JcsError> {
        seal(&self.payload())
    }
}

/// What a verification found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChainBreak {
    /// The stored hash is not the hash of the stored content: the event itself was altered.
    ContentAltered { seq: i64 },
    /// The event does not point at its predecessor's hash: an event before it was altered or removed.
    LinkBroken { seq: i64 },
    /// Sequence numbers are not consecutive from 1: events were removed or inserted.
    SequenceGap { expected: i64, found: i64 },
    /// The recorded head does not match the last event: events were removed from the end.
    HeadMismatch { head_seq: i64, last_seq: i64 },
}

/// Verifies a chain one event at a time, so that a long chain can be read page by page.
#[derive(Clone, Debug)]
pub struct ChainVerifier {
    expected_seq: i64,
    prev: String,
}

impl Default for ChainVerifier {
    fn default() -> Self {
        ChainVerifier { expected_seq: 1, prev: GENESIS_HASH.to_string() }
    }
}

impl ChainVerifier {
    /// Checks the next event (in `seq` order) against its stored hash.
    pub fn push(&mut self, event: &AuditEvent, stored_hash: &str) -> Result<(), ChainBreak> {
        if event.seq != self.expected_seq {
            return Err(ChainBreak::SequenceGap { expected: self.expected_seq, found: event.seq });
        }
        if event.prev_hash != self.prev {
            return Err(ChainBreak::LinkBroken { seq: event.seq });
        }
        match event.hash() {
            Ok(h) if h == stored_hash => {}
            _ => return Err(ChainBreak::ContentAltered { seq: event.seq }),
        }
        self.prev = stored_hash.to_string();
        self.expected_seq += 1;
        Ok(())
    }

    /// Number of events verified so far.
    pub fn verified(&self) -> i64 {
        self.expected_seq - 1
    }

    /// Checks the recorded head against the end of the chain.
    pub fn finish(&self, head_seq: i64, head_hash: &str) -> Result<i64, ChainBreak> {
        if head_seq != self.verified() || head_hash != self.prev {
            return Err(ChainBreak::HeadMismatch { head_seq, last_seq: self.verified() });
        }
        Ok(self.verified())
    }
}

/// Walks a whole chain in `seq` order; each item is an event and its stored hash.
pub fn verify_chain<'a>(events: impl IntoIterator<Item = (&'a AuditEvent, &'a str)>) -> Result<i64, ChainBreak> {
    let mut verifier = ChainVerifier::default();
    for (event, stored_hash) in events {
        verifier.push(event, stored_hash)?;
    }
    Ok(verifier.verified())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<(AuditEvent, String)> {
        let mut prev = GENESIS_HASH.to_string();
        (1..=n)
            .map(|seq| {
                let event = AuditEvent {
                    workspace_id: "wsp_1".into(),
                    seq,
                    prev_hash: prev.clone(),
                    occurred_at: 1_700_000_000_000_000 + seq,
                    environment: Some("sandbox".into()),
                    actor_kind: "application".into(),
                    actor_id: "app_1".into(),
                    action: "post_oauth_token".into(),
                    request_id: Some(format!("req_{seq}")),
                    subject: None,
                    details: json!({ "n": seq }),
                };
                let h = event.hash().expect("hash");
                prev = h.clone();
                (event, h)
            })
            .collect()
    }

    #[test]
    fn an_intact_chain_verifies() {
        let c = chain(5);
        assert_eq!(verify_chain(c.iter().map(|(e, h)| (e, h.as_str()))), Ok(5));
    }

    #[test]
    fn an_altered_event_is_named() {
        let mut c = chain(5);
        c[2].0.details = json!({ "n": 999 });
        assert_eq!(verify_chain(c.iter().map(|(e, h)| (e, h.as_str()))), Err(ChainBreak::ContentAltered { seq: 3 }));
    }

    #[test]
    fn a_rehashed_alteration_breaks_the_next_link() {
        let mut c = chain(5);
        c[2].0.details = json!({ "n": 999 });
        c[2].1 = c[2].0.hash().expect("hash");
        assert_eq!(verify_chain(c.iter().map(|(e, h)| (e, h.as_str()))), Err(ChainBreak::LinkBroken { seq: 4 }));
    }

    #[test]
    fn a_removed_event_is_a_gap() {
        let mut c = chain(5);
        c.remove(1);
        assert_eq!(
            verify_chain(c.iter().map(|(e, h)| (e, h.as_str()))),
            Err(ChainBreak::SequenceGap { expected: 2, found: 3 })
        );
    }
}
