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
