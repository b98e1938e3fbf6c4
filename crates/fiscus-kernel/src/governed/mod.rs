//! The application layer for governed changes.
//!
//! Every change that governance cares about — a proposal, a check version, an operator's decision, an
//! execution, a settlement, a webhook endpoint, a signed client's grant — is made once, whoever asks for it,
//! by a step that takes a [`Caller`] and answers a [`Failure`], and writes through [`record`]. The Financial
//! Actions' steps are in `fiscus-actions` (`steps/`); the kernel keeps what every area's steps share and
//! the governed changes of the platform itself (signed clients, production access, webhooks, set-aside
//! records). The adapters above (the area crates' routes, the console, the workers, the CLI) only parse
//! their input, build a [`Caller`], call a step inside a transaction they own, and render the result. Below
//! are the domain's rules (`fiscus_domain`) and the repositories (`fiscus_store`).
//!
//! Invariants this layer keeps (ARCHITECTURE.md lists them):
//! - nothing outside it writes the outbox or the audit log: [`record::announce`] writes an outbox event (in
//!   the one [`fiscus_domain::events::Event`] envelope) and its audit event together, in the transaction of
//!   the change an area's own record step writes beside them (a Financial Action's transition and history,
//!   `fiscus_actions::steps::record`), and [`record::audit`] is the only other way into the audit chain;
//! - it never imports the adapters (the `http`, `areas`, `console` and `workers` modules) or the web framework;
//! - every stored value it decides on arrives typed from the store (an unknown value is already a refusal).

pub mod execution_clients;
pub mod production;
pub mod record;
pub mod set_aside;
pub mod webhooks;

use fiscus_domain::actions::ActionKind;
use fiscus_domain::actor::Actor;
use fiscus_domain::error_code::ErrorCode;
use fiscus_domain::people::Refusal;
use fiscus_domain::production_access::Refusal as ProductionRefusal;
use fiscus_store::StoreError;

/// Who asks for a change, and through what: the actor, and the request and credential it came with (for
/// the audit event).
#[derive(Clone, Debug)]
pub struct Caller {
    pub actor: Actor,
    pub request_id: Option<String>,
    /// The application's credential (key or token id), for API callers.
    pub credential_id: Option<String>,
    /// The catalogue operation, for API callers.
    pub operation: Option<&'static str>,
    /// The action kinds a signed execution client's grant allows it to propose, submit or ask to execute;
    /// `None` for every other caller (their limits are scopes and the action gates).
    pub action_kinds: Option<Vec<ActionKind>>,
}

impl Caller {
    /// A caller with no request context (the CLI, a worker).
    pub fn bare(actor: Actor) -> Caller {
        Caller { actor, request_id: None, credential_id: None, operation: None, action_kinds: None }
    }
}

impl Caller {
    /// Refuses an action of `kind` when the caller is a signed client whose grant does not include it.
    pub fn may_act_on(&self, kind: ActionKind) -> Result<(), Failure> {
        match &self.action_kinds {
            Some(kinds) if !kinds.contains(&kind) => Err(Failure::refused(
                ErrorCode::OutsideGrant,
                format!("the client's grant does not include {} actions", kind.as_str()),
            )),
            _ => Ok(()),
        }
    }
}

/// Why a governed change did not happen. Nothing of it was written (the adapter drops the transaction).
#[derive(Debug)]
pub enum Failure {
    /// No such object in the caller's workspace and environment.
    NotFound,
    /// Field errors of a request that cannot be what it says.
    Invalid(Vec<(&'static str, String)>),
    /// A field names an object the caller's workspace does not hold: 409 `reference_not_found` with the
    /// field. Not 422 (the request breaks no rule the document states) and not 404 (the path's object is
    /// there; a 404 under a resource's path tells clients that resource is gone).
    Missing(&'static str, String),
    /// A rule of the lifecycle refused it (the code says which, the detail says why, and `members` are
    /// extension members of the problem a client matches on, such as the `reasons` of a closed gate).
    Refused { code: ErrorCode, detail: String, members: Vec<(&'static str, serde_json::Value)> },
    /// An operator's decision refused by the approval rules.
    Decision(Refusal),
    /// Production access refused by its rule (who may move it, and how).
    Production(ProductionRefusal),
    /// The numeric engine refused the inputs: the problem code its typed reason maps to
    /// (`compute::engine_code`), the reason (`infeasible`, `not_positive_definite`, …) and what it said.
    Computation { code: ErrorCode, engine_error: fiscus_domain::compute::EngineReason, detail: String },
    /// The store failed, or found data it does not recognise or that failed its seal.
    Store(StoreError),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Failure {
        match e {
            StoreError::NotFound => Failure::NotFound,
            other => Failure::Store(other),
        }
    }
}

impl Failure {
    /// `field` names an object the workspace does not hold.
    /// Too few observations for a computation, found before the engine is asked (409 `insufficient_data`).
    pub fn insufficient_data(detail: impl Into<String>) -> Failure {
        Failure::Computation {
            code: ErrorCode::InsufficientData,
            engine_error: fiscus_domain::compute::EngineReason::InsufficientData,
            detail: detail.into(),
        }
    }

    pub fn missing(field: &'static str, message: impl Into<String>) -> Failure {
        Failure::Missing(field, message.into())
    }

    pub fn refused(code: ErrorCode, detail: impl Into<String>) -> Failure {
        Failure::Refused { code, detail: detail.into(), members: Vec::new() }
    }

    /// A refusal with extension members.
    pub fn refused_with(
        code: ErrorCode,
        detail: impl Into<String>,
        members: Vec<(&'static str, serde_json::Value)>,
    ) -> Failure {
        Failure::Refused { code, detail: detail.into(), members }
    }

    /// A fact the code relies on did not hold (a transition the state machine should have allowed): an
    /// internal error, never a decision.
    pub fn internal(what: impl Into<String>) -> Failure {
        Failure::Store(StoreError::Corrupt(what.into()))
    }
}

/// A record body as canonical JSON (RFC 8785) and its `sha256:` hash: what every sealed record of the
/// application layer keeps and cites.
pub fn canonical<T: serde::Serialize>(what: &str, body: &T) -> Result<(String, String), Failure> {
    let value = serde_json::to_value(body).map_err(|e| Failure::internal(format!("{what}: {e}")))?;
    let json = fiscus_domain::jcs::canonicalize(&value).map_err(|e| Failure::internal(format!("{what}: {e:?}")))?;
    let hash = fiscus_domain::evidence::seal_bytes(json.as_bytes());
    Ok((json, hash))
}

/// A new sealed record of `body`: a fresh `prefix_…` id, its canonical JSON and hash, who made it and now.
pub fn new_record<B: serde::Serialize>(
    what: &str,
    prefix: &str,
    body: B,
    created_by: fiscus_domain::actor::Actor,
) -> Result<fiscus_store::sealed_records::Record<B>, Failure> {
    let (body_json, content_hash) = canonical(what, &body)?;
    Ok(fiscus_store::sealed_records::Record {
        id: fiscus_domain::ids::new_id(prefix),
        body,
        body_json,
        content_hash,
        created_by,
        created_at: fiscus_domain::clock::now_micros(),
    })
}
