//! The few places where SQLite and PostgreSQL need different SQL. Everything else is shared.

use crate::Backend;

/// How a write transaction begins. SQLite's `BEGIN IMMEDIATE` takes the write lock up front, so a
/// transaction that reads and then writes cannot fail at the upgrade; PostgreSQL uses row locks instead.
pub fn begin_write(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "BEGIN IMMEDIATE",
        Backend::Postgres => "BEGIN",
    }
}

/// Appended to a `SELECT` whose rows the transaction is about to decide on. SQLite needs nothing: the
/// immediate transaction already excludes other writers.
pub fn for_update(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR UPDATE",
    }
}

/// Appended to a claim query so that concurrent workers skip each other's rows instead of waiting.
pub fn for_update_skip_locked(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR UPDATE SKIP LOCKED",
    }
}

/// The backend a connection talks to.
pub fn backend_of(conn: &sqlx::AnyConnection) -> Backend {
    if conn.backend_name().eq_ignore_ascii_case("postgres") || conn.backend_name().eq_ignore_ascii_case("postgresql") {
        Backend::Postgres
    } else {
        Backend::Sqlite
    }
}
