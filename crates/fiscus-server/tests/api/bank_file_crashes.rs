//! A payment goes into exactly one bank file, whatever is killed when. Each round runs `fiscus serve` (the
//! bank file worker with it) as another process, stops it with SIGKILL at one point between writing a file
//! and recording that it was written, starts it again, and checks that every payment is in exactly one
//! published file, valid against the XSD, with nothing left in staging.

use fiscus_apptest::TestApp;
use fiscus_apptest::bank::{accounts, approve_and_execute, bank_app_with, production_key, propose, xsd_valid};
use fiscus_kernel::Settings;
use std::io::BufRead as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The points the bank file worker can be killed at (`FISCUS_FAULT_PAUSE_AT`), in the order it meets them:
/// after the file and its payments are committed; halfway through writing the staged copy; after the
/// staged copy is synced; after `staged` is committed; after the rename into the outbound directory.
const POINTS: [&str; 5] = ["file-recorded", "file-torn", "file-staged", "file-staged-recorded", "file-renamed"];

/// The `fiscus` binary of this build, beside this test binary's directory (`target/<profile>/deps/..`).
fn fiscus_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("this test binary");
    let bin = exe.parent().and_then(Path::parent).expect("target directory").join("fiscus");
    assert!(bin.exists(), "{} is not built: build the workspace first (scripts/test does)", bin.display());
    bin
}

/// Starts `fiscus serve` with `settings` (written as its TOML file in `dir`), paused at `point` if given;
/// returns it with a channel of its standard error's lines.
fn child(dir: &Path, settings: &Settings, point: Option<&str>) -> (Child, mpsc::Receiver<String>) {
    let config = dir.join("fiscus.toml");
    std::fs::write(&config, toml::to_string(settings).expect("toml")).expect("config");
    let mut cmd = Command::new(fiscus_binary());
    cmd.arg("serve")
        .arg("--config")
        .arg(&config)
        .env_remove("FISCUS_FAULT_PAUSE_AT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(point) = point {
        cmd.env("FISCUS_FAULT_PAUSE_AT", point);
    }
    let mut child = cmd.spawn().expect("spawn fiscus serve");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    // Drained to the end, so the child never blocks on a full pipe.
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Waits for a line of the child's standard error containing `marker`.
fn wait_for(lines: &mpsc::Receiver<String>, marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(marker) => return,
            Ok(_) => {}
            Err(e) => panic!("the child never said {marker}: {e}"),
        }
    }
}

/// Polls the database (another process writes it) until every payment is filed and every file published.
async fn all_published(app: &TestApp) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let unfiled = app.count("SELECT COUNT(*) FROM payment_instructions WHERE file_id IS NULL").await;
        let unpublished = app.count("SELECT COUNT(*) FROM payment_files WHERE state <> 'published'").await;
        if unfiled == 0 && unpublished == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "{unfiled} unfiled, {unpublished} unpublished after a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[tokio::test]
async fn a_payment_is_in_exactly_one_file_whatever_is_killed_when() {
    for point in POINTS {
        let dir = tempfile::tempdir().expect("dir");
        // The payments are executed here with no bank file worker, so they wait for the child's.
        let app = bank_app_with(dir.path(), |s| s.bank_file_worker = false).await;
        let key = production_key(&app).await;
        let supplier = accounts(&app, &key).await;
        let mut ids = Vec::new();
        for (i, amount) in [125_000, 9_900, 31_415].into_iter().enumerate() {
            ids.push(propose(&app, &key, &supplier, amount, &format!("INV-{i}")).await);
        }
        approve_and_execute(&app, &key, &ids).await;
        app.drain().await;
        assert_eq!(app.count("SELECT COUNT(*) FROM payment_instructions WHERE file_id IS NULL").await, 3);

        let settings = Settings { bank_file_worker: true, bind: "127.0.0.1:0".into(), ..app.state.settings.clone() };
        let (mut killed, lines) = child(dir.path(), &settings, Some(point));
        wait_for(&lines, &format!("FISCUS_FAULT_PAUSED {point}"));
        killed.kill().expect("SIGKILL");
        killed.wait().expect("reaped");

        let (mut restarted, _lines) = child(dir.path(), &settings, None);
        all_published(&app).await;
        restarted.kill().expect("stop");
        restarted.wait().expect("reaped");

        let tenant_dir = |root: &str| dir.path().join(root).join(&app.workspace_id).join("production");
        let published = files_in(&tenant_dir("outbound"));
        assert!(files_in(&tenant_dir("staging")).is_empty(), "{point}: nothing left in staging");
        let rows = app.count("SELECT COUNT(*) FROM payment_files").await;
        assert_eq!(published.len() as i64, rows, "{point}: one file on disk per file recorded");
        // The validator refuses an end-to-end id found twice, in one file or across files.
        let read = xsd_valid(&published);
        let mut paid: Vec<String> = read
            .iter()
            .flat_map(|r| r["payments"].as_array().expect("payments").clone())
            .map(|p| p["end_to_end_id"].as_str().expect("e2e").to_string())
            .collect();
        paid.sort();
        ids.sort();
        assert_eq!(paid, ids, "{point}: each payment in exactly one file");
    }
}
