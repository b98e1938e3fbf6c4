//! How fast the group-commit lanes commit on their own, without HTTP: `CONCURRENCY` tasks each run write
//! transactions of `STATEMENTS` single-row INSERTs through `Store::begin` / `WriteTx::commit` for a few
//! seconds. Separates the lanes' ceiling (round trips on their connections) from the rest of a request.
//!
//! Usage: `lane_rate <database URL> [seconds, default 5] [concurrency, default 32] [statements, default 3]`;
//! prints `<transactions per second> <members per durable commit>`.

use fiscus_domain::integrity::SealKey;
use fiscus_store::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or("usage: lane_rate <database URL> [seconds] [concurrency] [statements]")?;
    let seconds: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5.0);
    let concurrency: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(32);
    let statements: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let store = Store::connect(&url, 8, SealKey::derive(b"lane rate")).await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS lane_rate (id TEXT PRIMARY KEY, v TEXT NOT NULL)")
        .execute(store.pool())
        .await?;
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let before = store.group_commit_stats();
    let mut tasks = Vec::new();
    for t in 0..concurrency {
        let (store, done) = (store.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < until {
                let mut tx = store.begin().await?;
                for s in 0..statements {
                    n += 1;
                    sqlx::query("INSERT INTO lane_rate (id, v) VALUES ($1, $2)")
                        .bind(format!("{t}-{n}-{s}-{}", std::process::id()))
                        .bind("x".repeat(200))
                        .execute(tx.conn())
                        .await?;
                }
                tx.commit().await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), fiscus_store::StoreError>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let after = store.group_commit_stats();
    let (members, commits) = (after.0 - before.0, after.1 - before.1);
    println!("{:.0} {:.1}", done.load(Ordering::Relaxed) as f64 / elapsed, members as f64 / commits.max(1) as f64);
    sqlx::query("DROP TABLE lane_rate").execute(store.pool()).await?;
    Ok(())
}
