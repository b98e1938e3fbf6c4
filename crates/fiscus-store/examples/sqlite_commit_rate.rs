//! The raw baseline `bench/http.sh` compares keyed writes against: how many single-row write transactions per
//! second SQLite commits on this disk, with the settings the store uses (WAL, `synchronous=FULL`, one writer,
//! `BEGIN IMMEDIATE` … `COMMIT`), through the same driver.
//!
//! Usage: `sqlite_commit_rate <database file> [seconds, default 10]`; prints `<commits per second>`.

use sqlx::{Connection, Executor, SqliteConnection};
use std::time::{Duration, Instant};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: sqlite_commit_rate <database file> [seconds]")?;
    let seconds: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(10.0);
    let mut conn = SqliteConnection::connect(&format!("sqlite://{path}?mode=rwc")).await?;
    conn.execute("PRAGMA journal_mode = WAL").await?;
    conn.execute("PRAGMA synchronous = FULL").await?;
    conn.execute("CREATE TABLE IF NOT EXISTS raw_commits (id INTEGER PRIMARY KEY, v TEXT NOT NULL)").await?;
    let payload = "x".repeat(200);
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let mut commits = 0u64;
    while Instant::now() < until {
        conn.execute("BEGIN IMMEDIATE").await?;
        sqlx::query("INSERT INTO raw_commits (v) VALUES ($1)").bind(&payload).execute(&mut conn).await?;
        conn.execute("COMMIT").await?;
        commits += 1;
    }
    println!("{:.0}", commits as f64 / started.elapsed().as_secs_f64());
    Ok(())
}
