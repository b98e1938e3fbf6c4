//! What a repository call can fail with: not found, a conflict, data the store does not recognise or whose
//! seal does not match (`Corrupt`, `Integrity`), or the database itself.

use thiserror::Error;

/// Everything the store can fail with. `sqlx::Error` is mapped here, once, so callers match on meaning
/// (a unique key taken, nothing found) rather than on driver details.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("a row with this key already exists ({0})")]
    Conflict(String),
    #[error("not found")]
    NotFound,
    #[error("stored data is not what the code expects: {0}")]
    Corrupt(String),
    /// A sealed row no longer matches its keyed seal: it was changed outside Fiscus. Whatever was about to
    /// be decided on it is refused.
    #[error("sealed record failed verification: {0}")]
    Tampered(String),
    #[error("configuration: {0}")]
    Config(String),
    #[error("migration failed: {0}")]
    Migration(String),
    /// The group this write transaction was committed in failed to commit (see `group`): nothing of it is
    /// durable.
    #[error("group commit failed: {0}")]
    GroupCommit(String),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
}

impl StoreError {
    /// Whether the same request may succeed if sent again unchanged: the database was unreachable or restarting,
    /// the pool had no connection in time, the transaction lost a deadlock or a serialisation conflict, or its
    /// group's commit failed. Nothing of a failed write transaction is kept (a commit whose answer was lost may
    /// have been kept: a keyed request's retry then replays it), so the API answers 503 with `Retry-After`
    /// rather than 500, and a client or load balancer knows to retry (found by `bench/cluster.sh` across a
    /// PostgreSQL restart: requests in flight were told `internal_error`).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::GroupCommit(_) => true,
            StoreError::Database(e) => match e {
                sqlx::Error::Io(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::WorkerCrashed
                | sqlx::Error::Protocol(_) => true,
                sqlx::Error::Database(db) => db.code().is_some_and(|code| {
                    // SQLSTATE classes 08 (connection exception) and 57P (operator intervention: a restart,
                    // a crash, not accepting yet), serialization_failure, deadlock_detected, lock_not_available;
                    // SQLite's busy and locked.
                    code.starts_with("08")
                        || code.starts_with("57P")
                        || ["40001", "40P01", "55P03", "5", "6", "261", "517"].contains(&code.as_ref())
                }),
                _ => false,
            },
            _ => false,
        }
    }
}

/// A decoding that cannot fail (a row type read as itself).
impl From<std::convert::Infallible> for StoreError {
    fn from(never: std::convert::Infallible) -> StoreError {
        match never {}
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            // A stored value its type refuses (e.g. an actor label of no known kind): never decided on.
            sqlx::Error::ColumnDecode { index, source } => StoreError::Corrupt(format!("column {index}: {source}")),
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(db.constraint().unwrap_or("unique").to_string())
            }
            _ => StoreError::Database(e),
        }
    }
}

/// `Corrupt` naming the table, row, column and value that the code does not know: what every repository,
/// in the store or in an area's crate, answers for a stored value it cannot read.
pub fn corrupt(table: &str, id: &str, column: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("{table} {id}: {column} = {value:?}"))
}

/// An actor stored as its label (`kind:id`); a label of no known kind is `Corrupt` as [`corrupt`] names it.
pub fn stored_actor(
    table: &str,
    id: &str,
    column: &str,
    label: &str,
) -> Result<fiscus_domain::actor::Actor, StoreError> {
    fiscus_domain::actor::Actor::from_label(label).ok_or_else(|| corrupt(table, id, column, label))
}
