//! Three `fiscus serve` nodes of this build on one PostgreSQL behind HAProxy, under mixed load and faults:
//! `bench/cluster.sh --short` (issue 35), run as it is by anyone, here on the suite's PostgreSQL. It kills a
//! node with SIGKILL and restarts all three in turn, then checks that every acknowledged write replays, every
//! job, run and settlement happened once, every webhook event arrived (each subject's in order), `fiscus
//! verify all` passes, no request was answered 500, and no client request failed during the rolling
//! restart. The short variant leaves PostgreSQL itself running (the rest of the suite uses it). Skipped
//! without `FISCUS_TEST_DATABASE_URL`; it runs alone (`.config/nextest.toml`), since its checks on time
//! (recovery within a claim's stale time, drains) measure this machine.

use std::path::Path;
use std::process::Command;

#[test]
fn three_nodes_behind_a_proxy_lose_nothing_and_do_nothing_twice_through_a_kill_and_a_rolling_restart() {
    let Ok(database) = std::env::var("FISCUS_TEST_DATABASE_URL") else {
        eprintln!("skipped: FISCUS_TEST_DATABASE_URL is not set");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut script = Command::new(root.join("bench/cluster.sh"));
    script
        .arg("--short")
        .current_dir(&root)
        .env("FISCUS_BIN", env!("CARGO_BIN_EXE_fiscus"))
        .env("FISCUS_BENCH_DATABASE_URL", &database);
    if let Ok(python) = std::env::var("FISCUS_PYTHON") {
        script.env("FISCUS_PYTHON", python);
    }
    let out = script.output().expect("run bench/cluster.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "bench/cluster.sh --short failed:\n{stdout}");
    assert!(!stdout.contains("FAIL"), "a check failed:\n{stdout}");
}
