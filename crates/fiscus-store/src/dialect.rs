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

/// Appended to a claim query that joins other rows to its candidates (`fair::pick`): only the candidate
/// table `alias` is locked, and skipped when another worker holds it.
pub fn for_update_of_skip_locked(backend: Backend, alias: &str) -> String {
    match backend {
        Backend::Sqlite => String::new(),
        Backend::Postgres => format!(" FOR UPDATE OF {alias} SKIP LOCKED"),
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
pub(crate) const MAX_BINDS: usize = 10_000;

/// `$first, $first+1, …` for `n` values: the list of an `IN (…)` whose values follow `first - 1` others.
pub(crate) fn numbered(first: usize, n: usize) -> String {
    (first..first + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// Rows of `width` values one multi-row statement may carry (see [`MAX_BINDS`]).
pub(crate) fn rows_per_statement(width: usize) -> usize {
    (MAX_BINDS / width.max(1)).max(1)
}

/// `head` (`INSERT INTO t (a, b) VALUES `) followed by `rows` tuples of `width` parameters. SQLite looks a
/// numbered parameter (`$n`) up by name for every bind, a scan of the statement's parameters, which makes a
/// many-row statement quadratic (half an import's time in `sqlite3_bind_parameter_name` at 1,000 binds);
/// anonymous `?` parameters bind by position. PostgreSQL takes only `$n`.
pub(crate) fn multi_row_insert(backend: Backend, head: &str, rows: usize, width: usize) -> String {
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
pub(crate) use bind_all;
