//! The invariants, as pure functions over what a run left behind (the store's rows and the outside world's
//! logs), so that each can be shown a hand-made bad history (the tests at the end).

use crate::settlement::Call;
use crate::webhooks::Received;

/// A compute job after quiescing.
pub struct JobEnd {
    pub id: String,
    pub state: String,
    pub claimed_by: Option<String>,
    /// The outputs of its result rows.
    pub results: Vec<String>,
    pub expected: String,
    /// Workers whose ending transaction committed.
    pub endings: Vec<String>,
    pub computed: u32,
}

/// Every job ended exactly once, by the worker that held it, with one result, the engine's answer.
pub fn compute(jobs: &[JobEnd]) -> Vec<String> {
    let mut out = Vec::new();
    for j in jobs {
        if j.state != "succeeded" {
            out.push(format!("compute job {} ended {} (not succeeded: a lost claim)", j.id, j.state));
        }
        if j.results.len() != 1 || j.results.iter().any(|r| *r != j.expected) {
            out.push(format!("compute job {} has results {:?}, expected one {}", j.id, j.results, j.expected));
        }
        if j.endings.len() != 1 {
            out.push(format!("compute job {} was ended {} times: {:?}", j.id, j.endings.len(), j.endings));
        } else if j.claimed_by.as_deref() != Some(j.endings[0].as_str()) {
            out.push(format!("compute job {} was ended by {} but is held by {:?}", j.id, j.endings[0], j.claimed_by));
        }
        if j.computed == 0 && !j.endings.is_empty() {
            out.push(format!("compute job {} ended without being computed", j.id));
        }
    }
    out
}

/// A settlement item after quiescing.
pub struct ItemEnd {
    pub action_id: String,
    pub item_state: String,
    pub action_state: String,
    pub records: usize,
    pub calls: Vec<Call>,
}

/// Each action settled once in the store (one record, one move, its item done), its connector called at
/// least once with its id, exactly one of those calls in the committed transaction, none after it.
pub fn settlement(items: &[ItemEnd]) -> Vec<String> {
    let mut out = Vec::new();
    for i in items {
        let id = &i.action_id;
        if i.item_state != "done" {
            out.push(format!("settlement item of {id} is {} (a lost claim)", i.item_state));
        }
        if i.action_state != "completed" {
            out.push(format!("action {id} ended {}", i.action_state));
        }
        if i.records != 1 {
            out.push(format!("action {id} has {} settlement records", i.records));
        }
        let committed = i.calls.iter().filter(|c| c.committed).count();
        if committed != 1 {
            out.push(format!("action {id}: {committed} connector calls belong to a committed settlement, not 1"));
        }
        if let Some(c) = i.calls.iter().find(|c| c.after_recorded) {
            out.push(format!("action {id}: {} called the connector after the settlement was recorded", c.worker));
        }
    }
    out
}

/// One endpoint after quiescing.
pub struct EndpointEnd {
    pub id: String,
    /// The events it must hear, in event order.
    pub events: Vec<String>,
    pub received: Vec<Received>,
    pub delivery_states: Vec<(String, String)>,
    pub claimed_by: Option<String>,
}

/// At least once, in order: every event accepted by the receiver, no event sent before every earlier one
/// was accepted, every delivery succeeded, the queue let go.
pub fn webhooks(endpoints: &[EndpointEnd]) -> Vec<String> {
    let mut out = Vec::new();
    for e in endpoints {
        let position = |id: &str| e.events.iter().position(|x| x == id);
        let mut accepted_prefix = 0;
        for r in &e.received {
            let Some(at) = position(&r.event_id) else {
                out.push(format!("endpoint {} received {}, not its event", e.id, r.event_id));
                continue;
            };
            if at > accepted_prefix {
                out.push(format!(
                    "endpoint {} received {} before {} was delivered (out of order)",
                    e.id, r.event_id, e.events[accepted_prefix]
                ));
            }
            if r.accepted && at == accepted_prefix {
                accepted_prefix += 1;
            }
        }
        for ev in &e.events {
            if !e.received.iter().any(|r| r.accepted && r.event_id == *ev) {
                out.push(format!("endpoint {} never received {ev} (at-least-once lost)", e.id));
            }
        }
        if e.delivery_states.len() != e.events.len() {
            out.push(format!(
                "endpoint {} has {} deliveries for {} events",
                e.id,
                e.delivery_states.len(),
                e.events.len()
            ));
        }
        for (ev, state) in &e.delivery_states {
            if state != "succeeded" {
                out.push(format!("endpoint {}: delivery of {ev} is {state}", e.id));
            }
        }
        if let Some(w) = &e.claimed_by {
            out.push(format!("endpoint {}: queue still claimed by {w} (a lost claim)", e.id));
        }
    }
    out
}

/// A workflow or Agent Space run after quiescing: its steps (or calls) as recorded and as they must be.
pub struct RunEnd {
    pub kind: &'static str,
    pub id: String,
    pub state: String,
    pub claimed_by: Option<String>,
    pub due_at: Option<i64>,
    /// What the run ended with over its history (the evidence hash, the output hash), and what its recorded
    /// history makes.
    pub digest: Option<String>,
    pub digest_of_recorded: String,
    /// (sequence number, what was recorded), in sequence order.
    pub recorded: Vec<(i64, String)>,
    /// What each sequence number must hold, in order from the first.
    pub expected: Vec<(i64, String)>,
    /// Sequence numbers recorded that no worker computed or called.
    pub unmade: Vec<i64>,
    /// Workers whose ending transaction committed.
    pub endings: Vec<String>,
}

/// Every run ended once, completed, over its whole history: each step or call recorded exactly once, in
/// sequence, none missing, each what was computed or called for it; no claim left held, off the queue.
pub fn runs(runs: &[RunEnd]) -> Vec<String> {
    let mut out = Vec::new();
    for r in runs {
        let (kind, id) = (r.kind, &r.id);
        if r.state != "completed" {
            out.push(format!("{kind} {id} is {} (not completed)", r.state));
        }
        if r.endings.len() != 1 {
            out.push(format!("{kind} {id} was ended {} times: {:?}", r.endings.len(), r.endings));
        }
        if r.recorded != r.expected {
            let seqs: Vec<i64> = r.recorded.iter().map(|(s, _)| *s).collect();
            out.push(format!(
                "{kind} {id} recorded {seqs:?} (a step recorded twice, out of sequence or missing): {:?}, expected {:?}",
                r.recorded, r.expected
            ));
        }
        if !r.unmade.is_empty() {
            out.push(format!("{kind} {id} recorded {:?} without computing or calling them", r.unmade));
        }
        if r.digest.as_deref() != Some(r.digest_of_recorded.as_str()) {
            out.push(format!(
                "{kind} {id} ended with {:?}, its recorded history makes {}",
                r.digest, r.digest_of_recorded
            ));
        }
        if let Some(w) = &r.claimed_by {
            out.push(format!("{kind} {id} is still claimed by {w} (a claim left held)"));
        }
        if let Some(at) = r.due_at {
            out.push(format!("{kind} {id} is still due at {at} (on the queue after it ended)"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn got(event: &str, accepted: bool) -> Received {
        Received { event_id: event.into(), accepted }
    }

    fn endpoint(received: Vec<Received>) -> EndpointEnd {
        EndpointEnd {
            id: "whe_1".into(),
            events: vec!["e1".into(), "e2".into()],
            received,
            delivery_states: vec![("e1".into(), "succeeded".into()), ("e2".into(), "succeeded".into())],
            claimed_by: None,
        }
    }

    #[test]
    fn redelivery_and_retries_in_order_pass() {
        let e = endpoint(vec![got("e1", false), got("e1", true), got("e1", true), got("e2", true), got("e1", true)]);
        assert_eq!(webhooks(&[e]), Vec::<String>::new());
    }

    #[test]
    fn a_later_event_before_an_earlier_one_was_accepted_is_caught() {
        let e = endpoint(vec![got("e1", false), got("e2", true), got("e1", true)]);
        assert!(webhooks(&[e])[0].contains("out of order"));
    }

    #[test]
    fn an_event_never_accepted_is_caught() {
        let e = endpoint(vec![got("e1", true), got("e2", false)]);
        assert!(webhooks(&[e]).iter().any(|v| v.contains("never received e2")));
    }

    #[test]
    fn a_queue_left_claimed_is_caught() {
        let mut e = endpoint(vec![got("e1", true), got("e2", true)]);
        e.claimed_by = Some("node0".into());
        assert!(webhooks(&[e])[0].contains("lost claim"));
    }

    fn job(endings: &[&str], results: &[&str]) -> JobEnd {
        JobEnd {
            id: "cmp_1".into(),
            state: "succeeded".into(),
            claimed_by: Some("node1".into()),
            results: results.iter().map(|s| s.to_string()).collect(),
            expected: "out".into(),
            endings: endings.iter().map(|s| s.to_string()).collect(),
            computed: 2,
        }
    }

    #[test]
    fn a_job_ended_twice_or_by_another_worker_is_caught() {
        assert_eq!(compute(&[job(&["node1"], &["out"])]), Vec::<String>::new());
        assert!(compute(&[job(&["node0", "node1"], &["out"])])[0].contains("2 times"));
        assert!(compute(&[job(&["node0"], &["out"])])[0].contains("held by"));
        assert!(compute(&[job(&["node1"], &["other"])])[0].contains("results"));
    }

    fn call(committed: bool, after_recorded: bool) -> Call {
        Call { worker: "node0".into(), committed, after_recorded }
    }

    fn item(calls: Vec<Call>) -> ItemEnd {
        ItemEnd {
            action_id: "act_1".into(),
            item_state: "done".into(),
            action_state: "completed".into(),
            records: 1,
            calls,
        }
    }

    #[test]
    fn a_settlement_paid_twice_or_not_at_all_is_caught() {
        assert_eq!(settlement(&[item(vec![call(false, false), call(true, false)])]), Vec::<String>::new());
        assert!(settlement(&[item(vec![call(true, false), call(true, false)])])[0].contains("2 connector calls"));
        assert!(settlement(&[item(vec![])])[0].contains("0 connector calls"));
        assert!(settlement(&[item(vec![call(true, false), call(false, true)])])[0].contains("after the settlement"));
    }
    fn run(recorded: &[(i64, &str)], endings: &[&str]) -> RunEnd {
        RunEnd {
            kind: "agent run",
            id: "arn_1".into(),
            state: "completed".into(),
            claimed_by: None,
            due_at: None,
            digest: Some("sha256:d".into()),
            digest_of_recorded: "sha256:d".into(),
            recorded: recorded.iter().map(|(s, w)| (*s, w.to_string())).collect(),
            expected: vec![(1, "a".into()), (2, "b".into())],
            unmade: vec![],
            endings: endings.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_run_with_a_step_twice_a_gap_two_endings_or_a_claim_left_is_caught() {
        assert_eq!(runs(&[run(&[(1, "a"), (2, "b")], &["node0"])]), Vec::<String>::new());
        assert!(runs(&[run(&[(1, "a"), (2, "b"), (3, "b")], &["node0"])])[0].contains("recorded [1, 2, 3]"));
        assert!(runs(&[run(&[(1, "a"), (3, "b")], &["node0"])])[0].contains("recorded [1, 3]"));
        assert!(runs(&[run(&[(1, "a"), (2, "b")], &["node0", "node1"])])[0].contains("2 times"));
        let mut left = run(&[(1, "a"), (2, "b")], &["node0"]);
        left.claimed_by = Some("node1".into());
        left.digest = Some("sha256:other".into());
        let found = runs(&[left]);
        assert!(found.iter().any(|v| v.contains("claim left held")), "{found:?}");
        assert!(found.iter().any(|v| v.contains("recorded history makes")), "{found:?}");
    }
}
