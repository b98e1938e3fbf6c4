//! The layering of the server, checked on its sources: the application layer (`governed/`) is the only
//! writer of the outbox and the audit log, it never reaches up into the adapters, and the adapters do not
//! import each other's internals (`areas/` ↔ `workers/`).

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file of the server, with its path relative to `src/`.
fn files() -> Vec<(String, String)> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).expect("under src").to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("read"))
        })
        .collect()
}

fn offenders(pattern: &str, allowed: impl Fn(&str) -> bool) -> Vec<String> {
    files().into_iter().filter(|(rel, text)| !allowed(rel) && text.contains(pattern)).map(|(rel, _)| rel).collect()
}

#[test]
fn only_the_application_layer_writes_the_outbox_and_the_audit_log() {
    // `NewAuditEvent` is what both ways into the chain take: a `WriteTx`'s `audit::append` and a write
    // handed over whole (`Appends::audit`).
    for pattern in ["audit::append", "NewAuditEvent", "outbox::enqueue", "record_history(", "actions::transition("] {
        let found = offenders(pattern, |rel| rel.starts_with("governed/"));
        assert!(found.is_empty(), "`{pattern}` outside governed/: {found:?}");
    }
}

#[test]
fn the_application_layer_never_reaches_up_into_the_adapters() {
    for pattern in ["crate::http", "crate::areas", "crate::console", "crate::workers", "crate::state", "axum"] {
        let found: Vec<String> = offenders(pattern, |rel| !rel.starts_with("governed/"));
        assert!(found.is_empty(), "governed/ uses `{pattern}`: {found:?}");
    }
}

#[test]
fn areas_and_workers_do_not_import_each_other() {
    let found = offenders("crate::workers", |rel| !rel.starts_with("areas/"));
    assert!(found.is_empty(), "areas/ imports workers/: {found:?}");
    let found = offenders("crate::areas", |rel| !rel.starts_with("workers/"));
    assert!(found.is_empty(), "workers/ imports areas/: {found:?}");
}
