//! The audit chain: per workspace, each event's hash covers its content and the previous event's hash.
//!
//! `hash = seal({workspace_id, seq, prev_hash, occurred_at, environment, actor, action, request_id, subject,
//! details})`. Changing any stored field of any event, or removing or reordering events, breaks the chain at
//! that event, and `fiscus verify audit` names it.

use crate::clock::{Micros, rfc3339};
use crate::evidence::seal;
use crate::integrity::{SealKey, matches};
use crate::jcs::JcsError;
use serde_json::{Value, json};

/// The `prev_hash` of a workspace's first event.
pub const GENESIS_HASH: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

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
    /// The event's keyed MAC is missing or wrong: it was written or rewritten without the server key.
    NotAuthenticated { seq: i64 },
    /// The head's keyed MAC is missing or wrong: the head was moved without the server key (e.g. rewound
    /// after the tail was cut off).
    HeadNotAuthenticated { head_seq: i64 },
    /// The chain no longer reaches an anchored head kept outside the database: events were removed (and a
    /// valid older head put back), or the anchored event was replaced.
    BehindAnchor { anchored_seq: i64, last_seq: i64 },
    /// The chain no longer reaches the newest audit event the workspace log's latest signed checkpoint
    /// covers (the anchor every node shares): events were removed, or that event was replaced.
    BehindCheckpoint { tree_size: i64, anchored_seq: i64, last_seq: i64 },
    /// The latest kept checkpoint is not signed by this deployment's key for this log, so it anchors nothing.
    CheckpointNotAuthenticated { tree_size: i64 },
    /// Leaves below the latest checkpoint are gone, so the event it covers last cannot be found.
    CheckpointLeavesMissing { tree_size: i64 },
}

/// Verifies a chain one event at a time, so that a long chain can be read page by page.
#[derive(Clone, Debug)]
pub struct ChainVerifier {
    expected_seq: i64,
    prev: String,
    key: SealKey,
}

impl ChainVerifier {
    /// A verifier that also checks each event's and the head's keyed MAC.
    pub fn new(key: SealKey) -> ChainVerifier {
        ChainVerifier { expected_seq: 1, prev: GENESIS_HASH.to_string(), key }
    }

    /// Checks the next event (in `seq` order) against its stored hash and MAC.
    pub fn push(&mut self, event: &AuditEvent, stored_hash: &str, stored_mac: Option<&str>) -> Result<(), ChainBreak> {
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
        if !matches(stored_mac, &self.key.audit_event(&event.workspace_id, event.seq, stored_hash)) {
            return Err(ChainBreak::NotAuthenticated { seq: event.seq });
        }
        self.prev = stored_hash.to_string();
        self.expected_seq += 1;
        Ok(())
    }

    /// Number of events verified so far.
    pub fn verified(&self) -> i64 {
        self.expected_seq - 1
    }

    /// Checks the recorded head (and its MAC) against the end of the chain.
    pub fn finish(
        &self,
        workspace_id: &str,
        head_seq: i64,
        head_hash: &str,
        head_mac: Option<&str>,
    ) -> Result<i64, ChainBreak> {
        if head_seq != self.verified() || head_hash != self.prev {
            return Err(ChainBreak::HeadMismatch { head_seq, last_seq: self.verified() });
        }
        if !matches(head_mac, &self.key.audit_head(workspace_id, head_seq, head_hash)) {
            return Err(ChainBreak::HeadNotAuthenticated { head_seq });
        }
        Ok(self.verified())
    }
}

/// An anchored head: a position of a workspace's chain recorded outside the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub seq: i64,
    pub hash: String,
}

/// Checks that a chain whose last event is `last_seq` still holds the anchored event: `hash_at_anchor` is
/// the stored hash of the chain's event at the anchored position, if there is one.
pub fn check_anchor(anchor: &Anchor, last_seq: i64, hash_at_anchor: Option<&str>) -> Result<(), ChainBreak> {
    if anchor.seq == 0 {
        return Ok(());
    }
    if last_seq < anchor.seq || hash_at_anchor != Some(anchor.hash.as_str()) {
        return Err(ChainBreak::BehindAnchor { anchored_seq: anchor.seq, last_seq });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SealKey {
        SealKey::derive(b"test server key")
    }

    /// Walks a whole chain in `seq` order, as `fiscus verify audit` does page by page.
    fn verify_chain(c: &[(AuditEvent, String, String)]) -> Result<i64, ChainBreak> {
        let mut verifier = ChainVerifier::new(key());
        for (event, hash, mac) in c {
            verifier.push(event, hash, Some(mac))?;
        }
        Ok(verifier.verified())
    }

    fn chain(n: i64) -> Vec<(AuditEvent, String, String)> {
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
                let mac = key().audit_event("wsp_1", seq, &h);
                (event, h, mac)
            })
            .collect()
    }

    #[test]
    fn an_intact_chain_verifies() {
        let c = chain(5);
        assert_eq!(verify_chain(&c), Ok(5));
    }

    #[test]
    fn an_altered_event_is_named() {
        let mut c = chain(5);
        c[2].0.details = json!({ "n": 999 });
        assert_eq!(verify_chain(&c), Err(ChainBreak::ContentAltered { seq: 3 }));
    }

    #[test]
    fn a_rehashed_alteration_fails_its_keyed_mac() {
        let mut c = chain(5);
        c[2].0.details = json!({ "n": 999 });
        c[2].1 = c[2].0.hash().expect("hash");
        assert_eq!(verify_chain(&c), Err(ChainBreak::NotAuthenticated { seq: 3 }));
    }

    #[test]
    fn a_full_rewrite_without_the_key_is_not_authenticated() {
        let mut c = chain(5);
        c[2].0.details = json!({ "n": 999 });
        // Recompute every hash from the altered event on, as someone with only database access could.
        for i in 2..5 {
            if i > 2 {
                c[i].0.prev_hash = c[i - 1].1.clone();
            }
            c[i].1 = c[i].0.hash().expect("hash");
        }
        assert_eq!(verify_chain(&c), Err(ChainBreak::NotAuthenticated { seq: 3 }));
    }

    #[test]
    fn a_rewound_head_needs_the_key_and_an_anchor_catches_a_replayed_one() {
        let c = chain(5);
        let mut verifier = ChainVerifier::new(key());
        for (event, hash, mac) in &c[..3] {
            verifier.push(event, hash, Some(mac)).expect("intact");
        }
        // The tail (4, 5) was cut off and the head rewound to event 3 with the old head MAC of event 5.
        let old_head_mac = key().audit_head("wsp_1", 5, &c[4].1);
        assert_eq!(
            verifier.finish("wsp_1", 3, &c[2].1, Some(&old_head_mac)),
            Err(ChainBreak::HeadNotAuthenticated { head_seq: 3 })
        );
        // A head MAC saved from when 3 was the head would pass; the anchor kept outside does not.
        let saved = key().audit_head("wsp_1", 3, &c[2].1);
        assert_eq!(verifier.finish("wsp_1", 3, &c[2].1, Some(&saved)), Ok(3));
        let anchor = Anchor { seq: 5, hash: c[4].1.clone() };
        assert_eq!(check_anchor(&anchor, 3, None), Err(ChainBreak::BehindAnchor { anchored_seq: 5, last_seq: 3 }));
        assert_eq!(check_anchor(&anchor, 5, Some(&c[4].1)), Ok(()));
        assert!(check_anchor(&anchor, 6, Some("sha256:other")).is_err(), "the anchored event was replaced");
    }

    #[test]
    fn a_removed_event_is_a_gap() {
        let mut c = chain(5);
        c.remove(1);
        assert_eq!(verify_chain(&c), Err(ChainBreak::SequenceGap { expected: 2, found: 3 }));
    }
}
