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
///
/// On PostgreSQL the lock is `FOR NO KEY UPDATE`, which excludes every other decider (they take the same
/// lock, and an `UPDATE` or `DELETE` waits for it) but not a foreign key's check (`FOR KEY SHARE`) of a row
/// inserted elsewhere that references the locked one. `FOR UPDATE` blocked those: a group commit holding a
/// workspace's audit head inserts its sealed rows and events (which reference the workspace, the action)
/// under it, so a transaction that locked the workspace `FOR UPDATE` and then waited for the head deadlocked
/// with it, and the whole group failed (found by `bench/cluster.sh`: a credit debit against evidence writes).
/// No row Fiscus locks this way ever has its key changed.
pub fn for_update(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR NO KEY UPDATE",
    }
}

/// Appended to a claim query so that concurrent workers skip each other's rows instead of waiting (the
/// lock of [`for_update`], for the same reason: a claimed job's children are inserted under audit heads).
pub fn for_update_skip_locked(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "",
        Backend::Postgres => " FOR NO KEY UPDATE SKIP LOCKED",
    }
}

/// Appended to a claim query that joins other rows to its candidates (`fair::pick`): only the candidate
/// table `alias` is locked, and skipped when another worker holds it.
pub fn for_update_of_skip_locked(backend: Backend, alias: &str) -> String {
    match backend {
        Backend::Sqlite => String::new(),
        Backend::Postgres => format!(" FOR NO KEY UPDATE OF {alias} SKIP LOCKED"),
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

/// The binds one statement may carry on both backends (SQLite's default limit is 32,766, PostgreSQL's
/// 65,535).
pub const MAX_BINDS: usize = 10_000;

/// `$first, $first+1, …` for `n` values: the list of an `IN (…)` whose values follow `first - 1` others.
pub fn numbered(first: usize, n: usize) -> String {
    (first..first + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// Rows of `width` values one multi-row statement may carry (see [`MAX_BINDS`]).
pub fn rows_per_statement(width: usize) -> usize {
    (MAX_BINDS / width.max(1)).max(1)
}

/// `head` (`INSERT INTO t (a, b) VALUES `) followed by `rows` tuples of `width` parameters. SQLite looks a
/// numbered parameter (`$n`) up by name for every bind, a scan of the statement's parameters, which makes a
/// many-row statement quadratic (half an import's time in `sqlite3_bind_parameter_name` at 1,000 binds);
/// anonymous `?` parameters bind by position. PostgreSQL takes only `$n`.
pub fn multi_row_insert(backend: Backend, head: &str, rows: usize, width: usize) -> String {
    let mut sql = String::with_capacity(head.len() + rows * width * 5);
    sql.push_str(head);
    let mut n = 0;
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push('(');
        for c in 0..width {
            if c > 0 {
                sql.push(',');
            }
            n += 1;
            match backend {
                Backend::Sqlite => sql.push('?'),
                Backend::Postgres => {
                    sql.push('$');
                    sql.push_str(&n.to_string());
                }
            }
        }
        sql.push(')');
    }
    sql
}

/// Binds stored values (`&Stored` items) to a query or query-as in order. A null is bound as text (the `Any`
/// driver needs a type for it), so a column that may receive one from a `Stored` row must be a text column.
#[macro_export]
macro_rules! bind_all {
    ($q:expr, $binds:expr) => {{
        let mut q = $q;
        for b in $binds {
            q = match b {
                fiscus_domain::integrity::Stored::Integer(i) => q.bind(*i),
                fiscus_domain::integrity::Stored::Text(t) => q.bind(t.as_str()),
                fiscus_domain::integrity::Stored::Null => q.bind(None::<String>),
            };
        }
        q
    }};
}
pub use crate::bind_all;
