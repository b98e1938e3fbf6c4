//! A cache of credential resolutions and workspace rows for the embedded (SQLite, single-node) deployment,
//! so that an authenticated request needs no database round trip.
//!
//! Correctness rests on a *generation file* beside the database (`<db>.credentials-generation`). Every
//! transaction that changes credential or workspace standing (rotation, revocation, suspension, production
//! access, entitlement) writes a fresh random generation there right after it commits, in whichever process
//! committed it (the server, or the admin CLI beside it). Each lookup reads the file first (a few
//! microseconds) and drops the whole cache when the generation moved, so a rotation is refused by the next
//! request after the committing command returns. Anything unexpected (the file unreadable) bypasses the cache.
//!
//! With PostgreSQL, several nodes share the database and no file can tell them; the cache is off and every
//! request resolves its credential in the database.

use crate::credentials::ResolvedCredential;
use crate::workspaces::WorkspaceRow;
use rand::RngCore;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

const MAX_ENTRIES: usize = 50_000;

pub struct TenancyCache {
    generation_file: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    generation: Vec<u8>,
    api_keys: HashMap<String, Arc<ResolvedCredential>>,
    tokens: HashMap<String, Arc<ResolvedCredential>>,
    workspaces: HashMap<String, Arc<WorkspaceRow>>,
}

impl State {
    fn len(&self) -> usize {
        self.api_keys.len() + self.tokens.len() + self.workspaces.len()
    }

    fn clear(&mut self) {
        self.api_keys.clear();
        self.tokens.clear();
        self.workspaces.clear();
    }
}

/// Which map an entry lives in.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    ApiKey,
    Token,
}

/// The generation read before a lookup; an entry is stored only under the generation it was read at.
pub(crate) struct Ticket(Vec<u8>);

impl TenancyCache {
    pub fn new(generation_file: PathBuf) -> TenancyCache {
        TenancyCache { generation_file, state: Mutex::new(State::default()) }
    }

    /// The current generation, or `None` when it cannot be read for a reason other than "not written yet".
    fn read_generation(&self) -> Option<Vec<u8>> {
        match std::fs::read(&self.generation_file) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Vec::new()),
            Err(_) => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Checks the generation; returns the ticket for storing a miss, and the hit if any.
    fn check<T: Clone>(&self, pick: impl FnOnce(&State) -> Option<T>) -> Option<(Ticket, Option<T>)> {
        let generation = self.read_generation()?;
        let mut state = self.lock();
        if state.generation != generation {
            state.clear();
            state.generation = generation.clone();
        }
        let hit = pick(&state);
        Some((Ticket(generation), hit))
    }

    pub(crate) fn credential(&self, kind: Kind, lookup: &str) -> Option<(Ticket, Option<Arc<ResolvedCredential>>)> {
        self.check(|s| match kind {
            Kind::ApiKey => s.api_keys.get(lookup).cloned(),
            Kind::Token => s.tokens.get(lookup).cloned(),
        })
    }

    pub(crate) fn workspace(&self, id: &str) -> Option<(Ticket, Option<Arc<WorkspaceRow>>)> {
        self.check(|s| s.workspaces.get(id).cloned())
    }

    fn store(&self, ticket: Ticket, insert: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        // A change committed while the database was read leaves the entry out.
        if state.generation != ticket.0 {
            return;
        }
        if state.len() >= MAX_ENTRIES {
            state.clear();
        }
        insert(&mut state);
    }

    pub(crate) fn store_credential(&self, ticket: Ticket, kind: Kind, lookup: &str, value: Arc<ResolvedCredential>) {
        self.store(ticket, |s| {
            match kind {
                Kind::ApiKey => s.api_keys.insert(lookup.to_string(), value),
                Kind::Token => s.tokens.insert(lookup.to_string(), value),
            };
        });
    }

    pub(crate) fn store_workspace(&self, ticket: Ticket, value: Arc<WorkspaceRow>) {
        self.store(ticket, |s| {
            s.workspaces.insert(value.id.clone(), value);
        });
    }

    /// Publishes a new generation. Written to a temporary file and renamed, so a reader sees the old or the
    /// new generation, never half of one. The writer is called before the commit (a failure aborts the
    /// change: better no rotation than one the server cannot see) and again after it (so nothing read
    /// between the two is kept).
    pub fn bump(&self) -> std::io::Result<()> {
        let mut nonce = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let tmp = self.generation_file.with_extension(format!("tmp{}", std::process::id()));
        let written = std::fs::write(&tmp, nonce).and_then(|_| std::fs::rename(&tmp, &self.generation_file));
        let mut state = self.lock();
        state.clear();
        // On failure this process's own cache becomes unusable rather than stale.
        state.generation = if written.is_ok() { nonce.to_vec() } else { b"unwritable".to_vec() };
        written
    }
}
