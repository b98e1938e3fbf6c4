//! The layering of the workspace, checked two ways: the crate graph as `cargo metadata` reports it (each
//! crate may depend only on the crates below it, so an upward import does not compile), and, inside the
//! crates, what the graph cannot say (only the governed unit of change writes the outbox and the audit
//! log; routes and workers do not import each other; every source file opens with a comment saying what it
//! is).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What an area crate may depend on: the layers below, the leaf libraries (the engine, speech) and the
/// console's kit for the area's own console pages.
const AREA: &[&str] = &[
    "fiscus-domain",
    "fiscus-store",
    "fiscus-data-core",
    "fiscus-quant",
    "fiscus-speech",
    "fiscus-iso20022",
    "fiscus-kernel",
    "fiscus-http",
    "fiscus-actions",
    "fiscus-console",
];

/// What each workspace crate may depend on (normal and build dependencies; tests may use more). A crate
/// missing here fails the test: whoever adds one says where it stands.
const ALLOWED: &[(&str, &[&str])] = &[
    ("fiscus-domain", &[]),
    ("fiscus-quant", &[]),
    ("fiscus-speech", &[]),
    // Bank messages: pure, on the domain's money and bank details.
    ("fiscus-iso20022", &["fiscus-domain"]),
    ("fiscus-store", &["fiscus-domain"]),
    // The data plane every reader shares (datasets, their rows, the book): under the kernel's computation
    // inputs and every area that reads data.
    ("fiscus-data-core", &["fiscus-domain", "fiscus-store"]),
    // Services for every application layer and worker; nothing of HTTP, no area.
    ("fiscus-kernel", &["fiscus-domain", "fiscus-store", "fiscus-data-core", "fiscus-quant", "fiscus-speech"]),
    // The cross-cutting HTTP layers and the state handlers share; no area, no composition.
    ("fiscus-http", &["fiscus-domain", "fiscus-store", "fiscus-kernel"]),
    // Financial Actions, the central noun, end to end (steps, routes, connectors, bank files): under every
    // area that proposes or reads an action, and under the console that decides them.
    ("fiscus-actions", &["fiscus-domain", "fiscus-store", "fiscus-kernel", "fiscus-http", "fiscus-iso20022"]),
    // What repository tests share: a dev-dependency only (no crate here may name it as a normal one).
    ("fiscus-testkit", &["fiscus-domain", "fiscus-store"]),
    // What HTTP tests share (a real server, the console and bank channel as tests drive them): a
    // dev-dependency only, of an area's tests and the composition's.
    (
        "fiscus-apptest",
        &[
            "fiscus-domain",
            "fiscus-store",
            "fiscus-kernel",
            "fiscus-http",
            "fiscus-actions",
            "fiscus-console",
            "fiscus-data",
            "fiscus-server",
            "fiscus-testkit",
        ],
    ),
    // The areas: each on the layers below, never on another area.
    ("fiscus-data", AREA),
    ("fiscus-investment", AREA),
    ("fiscus-models", AREA),
    ("fiscus-agents", AREA),
    ("fiscus-platform", AREA),
    // The people's plane: the console's own pages and the kit the areas build theirs with; no area, so an
    // edit to an area rebuilds neither the console nor another area.
    (
        "fiscus-console",
        &["fiscus-domain", "fiscus-store", "fiscus-data-core", "fiscus-kernel", "fiscus-http", "fiscus-actions"],
    ),
    // The composition: router assembly, serve, workers, admin, the cross-area marketplace listing.
    (
        "fiscus-server",
        &[
            "fiscus-domain",
            "fiscus-store",
            "fiscus-data-core",
            "fiscus-quant",
            "fiscus-kernel",
            "fiscus-http",
            "fiscus-actions",
            "fiscus-data",
            "fiscus-investment",
            "fiscus-models",
            "fiscus-agents",
            "fiscus-platform",
            "fiscus-console",
        ],
    ),
    // The command line: the composition and what its commands call.
    (
        "fiscus",
        &[
            "fiscus-domain",
            "fiscus-store",
            "fiscus-data-core",
            "fiscus-kernel",
            "fiscus-actions",
            "fiscus-data",
            "fiscus-investment",
            "fiscus-models",
            "fiscus-platform",
            "fiscus-server",
        ],
    ),
];

/// External crates a layer must never reach, whatever its workspace edges: the kernel knows no web
/// framework (its services are handed to workers and the CLI as much as to handlers).
const FORBIDDEN_EXTERNAL: &[(&str, &[&str])] = &[("fiscus-kernel", &["axum", "hyper", "tower", "utoipa-axum"])];

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("cargo metadata is JSON")
}

/// Each workspace crate's normal and build dependencies, by name.
fn dependencies(meta: &Value) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for package in meta["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name").to_string();
        let deps = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str().map(str::to_string))
            .collect();
        out.insert(name, deps);
    }
    out
}

#[test]
fn every_crate_depends_only_on_the_crates_below_it() {
    let deps = dependencies(&metadata());
    let members: BTreeSet<&str> = deps.keys().map(String::as_str).collect();
    let mut faults = Vec::new();
    for (name, of) in &deps {
        let Some((_, allowed)) = ALLOWED.iter().find(|(n, _)| n == name) else {
            faults.push(format!("{name} is not in the crate graph of this test"));
            continue;
        };
        for dep in of.iter().filter(|d| members.contains(d.as_str())) {
            if !allowed.contains(&dep.as_str()) {
                faults.push(format!("{name} depends on {dep}"));
            }
        }
        for (_, forbidden) in FORBIDDEN_EXTERNAL.iter().filter(|(n, _)| n == name) {
            faults.extend(of.iter().filter(|d| forbidden.contains(&d.as_str())).map(|d| format!("{name} uses {d}")));
        }
    }
    assert!(faults.is_empty(), "forbidden edges: {faults:#?}");
}

#[test]
fn the_graph_this_test_holds_is_the_workspace() {
    // A crate listed here that the workspace no longer has is a stale rule.
    let deps = dependencies(&metadata());
    let stale: Vec<&str> = ALLOWED.iter().map(|(n, _)| *n).filter(|n| !deps.contains_key(*n)).collect();
    assert!(stale.is_empty(), "crates in the rules but not in the workspace: {stale:?}");
}

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

/// Every source file of a workspace crate, with its path relative to `crates/`.
fn files(krate: &str) -> Vec<(String, String)> {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = Vec::new();
    sources(&crates.join(krate).join("src"), &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&crates).expect("under crates").to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("read"))
        })
        .collect()
}

#[test]
fn only_the_governed_unit_of_change_writes_the_outbox_the_audit_log_and_an_actions_state() {
    // `NewAuditEvent` is what both ways into the chain take: a `WriteTx`'s `audit::append` and a write
    // handed over whole (`Appends::audit`).
    // Every crate but the store, whose repositories are the primitives the governed layer calls.
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let names: Vec<String> = std::fs::read_dir(&crates)
        .expect("crates")
        .flatten()
        .filter(|e| e.path().join("src").is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n != "fiscus-store")
        .collect();
    assert!(names.iter().any(|n| n == "fiscus-actions"), "the crate list is read");
    let all: Vec<(String, String)> = names.iter().flat_map(|k| files(k)).collect();
    assert!(all.iter().any(|(rel, _)| rel.starts_with("fiscus-kernel/src/governed/")), "the governed layer moved");
    for pattern in ["audit::append", "NewAuditEvent", "outbox::enqueue"] {
        let found: Vec<&String> = all
            .iter()
            .filter(|(rel, text)| !rel.starts_with("fiscus-kernel/src/governed/") && text.contains(pattern))
            .map(|(rel, _)| rel)
            .collect();
        assert!(found.is_empty(), "`{pattern}` outside the governed layer: {found:?}");
    }
    // An action's state and history: only the Financial Actions' record step, which announces each change
    // through the kernel's `announce` in the same transaction.
    // (The actions' table, which defines these writes, is the other file that names them.)
    const ACTION_RECORD: &str = "fiscus-actions/src/steps/record.rs";
    const ACTION_TABLE: &str = "fiscus-actions/src/tables/actions.rs";
    assert!(all.iter().any(|(rel, _)| rel == ACTION_RECORD), "the actions' record step moved");
    assert!(all.iter().any(|(rel, _)| rel == ACTION_TABLE), "the actions' table moved");
    for pattern in ["record_history(", "record_history_many(", "actions::transition(", "actions::transition_many("] {
        let found: Vec<&String> = all
            .iter()
            .filter(|(rel, text)| rel != ACTION_RECORD && rel != ACTION_TABLE && text.contains(pattern))
            .map(|(rel, _)| rel)
            .collect();
        assert!(found.is_empty(), "`{pattern}` outside the actions' record step: {found:?}");
    }
}

#[test]
fn routes_and_workers_do_not_import_each_other() {
    let server = files("fiscus-server");
    let importing = |from: &str, pattern: &str| -> Vec<String> {
        server
            .iter()
            .filter(|(rel, text)| rel.contains(from) && text.contains(pattern))
            .map(|(r, _)| r.clone())
            .collect()
    };
    let found = importing("/src/areas/", "crate::workers");
    assert!(found.is_empty(), "areas/ imports workers/: {found:?}");
    let found = importing("/src/workers/", "crate::areas");
    assert!(found.is_empty(), "workers/ imports areas/: {found:?}");
}

#[test]
fn every_source_file_opens_with_a_comment_saying_what_it_is() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut silent = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !entry.path().join("src").is_dir() {
            continue;
        }
        // Sources and tests alike: a test file says what it holds to (issue 56).
        let mut tests = Vec::new();
        if entry.path().join("tests").is_dir() {
            sources(&entry.path().join("tests"), &mut tests);
        }
        let tests = tests.into_iter().map(|p| {
            let rel = p.strip_prefix(&crates).expect("under crates").to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&p).expect("read"))
        });
        for (rel, text) in files(&name).into_iter().chain(tests) {
            if !text.trim_start().starts_with("//") {
                silent.push(rel);
            }
        }
    }
    silent.sort();
    assert!(silent.is_empty(), "files without a first comment: {silent:#?}");
}

/// A source file past this many lines is asking to be split along a seam; one that stays whole says why in
/// its first comment, in a sentence beginning "It is long because".
const LONG_FILE: usize = 500;

#[test]
fn every_long_source_file_says_why_it_is_long() {
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut unexplained = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !entry.path().join("src").is_dir() {
            continue;
        }
        for (rel, text) in files(&name) {
            let lines = text.lines().count();
            let opening: String = text.lines().take_while(|l| l.starts_with("//")).collect::<Vec<_>>().join(" ");
            if lines > LONG_FILE && !opening.contains("It is long because") {
                unexplained.push(format!("{rel} ({lines} lines)"));
            }
        }
    }
    unexplained.sort();
    assert!(unexplained.is_empty(), "files past {LONG_FILE} lines that do not say why: {unexplained:#?}");
}

/// Inside each crate, the top-level modules (a file under `src/`, or a folder) and the ones each names as
/// `crate::…`, comments left out.
fn module_imports(krate: &str) -> (BTreeMap<String, BTreeSet<String>>, BTreeSet<String>) {
    let prefix = format!("{krate}/src/");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut folders = BTreeSet::new();
    for (rel, text) in files(krate) {
        let inner = rel.strip_prefix(&prefix).expect("under src");
        let (top, folder) = match inner.split_once('/') {
            Some((dir, _)) => (dir.to_string(), true),
            None => (inner.trim_end_matches(".rs").to_string(), false),
        };
        if top == "lib" || top == "main" {
            continue;
        }
        if folder {
            folders.insert(top.clone());
        }
        let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        let named = graph.entry(top.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            // `crate::` itself, not the end of `fiscus_crate::`.
            if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let module: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !module.is_empty() && module != top {
                named.insert(module);
            }
        }
    }
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    for named in graph.values_mut() {
        named.retain(|m| known.contains(m));
    }
    (graph, folders)
}

/// The strongly connected groups of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(w: &mut Walk<'g>, v: &'g str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        for next in &w.graph[v] {
            let next = next.as_str();
            if !w.index.contains_key(next) {
                visit(w, next);
                let l = w.low[next].min(w.low[v]);
                w.low.insert(v, l);
            } else if w.stack.contains(&next) {
                let l = w.index[next].min(w.low[v]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = Vec::new();
            while let Some(m) = w.stack.pop() {
                group.push(m.to_string());
                if m == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                w.found.push(group);
            }
        }
    }
    let mut w = Walk { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in graph.keys() {
        if !w.index.contains_key(v.as_str()) {
            visit(&mut w, v);
        }
    }
    w.found
}

#[test]
fn no_import_circle_spans_more_than_one_folder_of_a_crate() {
    // Files of one folder may name each other both ways (the HTTP crate's layers and its state do); a circle
    // through a folder module means two parts of a crate that cannot be read, or moved, one without the
    // other.
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut faults = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !entry.path().join("src").is_dir() {
            continue;
        }
        let (graph, folders) = module_imports(&name);
        for group in circles(&graph) {
            if group.iter().any(|m| folders.contains(m)) {
                faults.push(format!("{name}: {}", group.join(" ↔ ")));
            }
        }
    }
    assert!(faults.is_empty(), "import circles through a folder: {faults:#?}");
}

#[test]
fn the_circle_check_finds_a_circle_through_a_folder() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("seals", vec!["themes"]),
        ("themes", vec!["seals"]),
        ("lqm", vec!["seals"]),
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let mut found = circles(&graph);
    found.sort();
    assert_eq!(found, vec![vec!["a", "b", "c"], vec!["seals", "themes"]]);
}

#[test]
fn financial_actions_live_in_their_own_crate() {
    // The governed steps and the routes of the central noun are in one crate, and no other crate holds a
    // step of theirs again (issue 56).
    let actions = files("fiscus-actions");
    for step in ["propose", "submit", "check", "decide", "execute", "gates", "settle"] {
        let path = format!("fiscus-actions/src/steps/{step}.rs");
        assert!(actions.iter().any(|(rel, _)| *rel == path), "{path} is missing");
    }
    for rule in ["envelope", "transitions", "approval", "checks", "gates", "delegation", "autonomy", "settlement"] {
        let path = format!("fiscus-actions/src/rules/{rule}.rs");
        assert!(actions.iter().any(|(rel, _)| *rel == path), "{path} is missing");
    }
    for file in [
        "routes/mod.rs",
        "views.rs",
        "tables/actions.rs",
        "connectors.rs",
        "bank_files.rs",
        "bank_messages.rs",
        "bank_inbound.rs",
    ] {
        let path = format!("fiscus-actions/src/{file}");
        assert!(actions.iter().any(|(rel, _)| *rel == path), "{path} is missing");
    }
    let elsewhere: Vec<String> = ["fiscus-kernel", "fiscus-platform", "fiscus-server", "fiscus-console"]
        .iter()
        .flat_map(|k| files(k))
        .filter(|(rel, _)| rel.contains("/governed/actions/") || rel.contains("/src/actions/"))
        .map(|(rel, _)| rel)
        .collect();
    assert!(elsewhere.is_empty(), "Financial Actions' steps or routes outside their crate: {elsewhere:?}");
    // Below the actions crate only the names other layers share stay (`fiscus_domain::actions`: an action's
    // kind and control state); its rules, views and repository are not there any more.
    let below: Vec<String> = ["fiscus-domain", "fiscus-store", "fiscus-kernel", "fiscus-http"]
        .iter()
        .flat_map(|k| files(k))
        .map(|(rel, _)| rel)
        .filter(|rel| {
            rel.contains("/src/actions/") || rel.ends_with("/api/actions.rs") || rel == "fiscus-store/src/actions.rs"
        })
        .collect();
    assert!(below.is_empty(), "Financial Actions' rules, views or repository below their crate: {below:?}");
    let domain_actions = source("fiscus-domain/src/actions.rs");
    for rule in ["fn decide", "fn evaluate", "fn quorum", "fn next(", "struct Envelope", "struct ProposalRequest"] {
        assert!(
            !domain_actions.contains(rule),
            "fiscus_domain::actions holds a rule ({rule}); rules live in fiscus-actions"
        );
    }
}

/// One source file's text, by its path relative to `crates/` (`fiscus-store/src/lib.rs`).
fn source(rel: &str) -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)).expect(rel)
}

#[test]
fn every_crate_says_under_it_what_it_owns_and_must_never_do() {
    // Invariants live under the crate they bind (as rust-analyzer's architecture page asks), not only in
    // the map.
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut silent = Vec::new();
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        if !entry.path().join("src").is_dir() {
            continue;
        }
        let readme = std::fs::read_to_string(entry.path().join("README.md")).unwrap_or_default();
        if !readme.contains("**Owns**") || !readme.contains("**Must never**") {
            silent.push(entry.file_name().to_string_lossy().to_string());
        }
    }
    silent.sort();
    assert!(silent.is_empty(), "crates whose README.md does not say what they own and must never do: {silent:?}");
}

#[test]
fn the_architecture_page_stays_a_map() {
    let page = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let size = std::fs::metadata(&page).expect("ARCHITECTURE.md").len();
    assert!(
        size <= 30 * 1024,
        "ARCHITECTURE.md is {size} bytes; a map stays within 30 KiB, detail goes under its crate"
    );
}

#[test]
fn the_services_are_never_named_state() {
    // `state` is the HTTP state (`AppState`); the kernel's `Services`, which application layers and workers
    // take, is `services`, so `state.store` and `services.store` never read alike (issue 56).
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    // Built here so that this file does not hold what it looks for.
    let patterns: Vec<String> = ["&", "&'a ", ""].iter().map(|r| format!("state: {r}{}", "Services")).collect();
    let named = files_holding(&crates, &patterns);
    assert!(named.is_empty(), "`Services` named `state`: {named:?}");
}

/// Every source file (tests included) under `crates/` that holds one of `patterns`.
fn files_holding(crates: &Path, patterns: &[String]) -> Vec<String> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(crates).expect("crates").flatten() {
        for dir in ["src", "tests", "examples"] {
            if entry.path().join(dir).is_dir() {
                sources(&entry.path().join(dir), &mut all);
            }
        }
    }
    let mut found: Vec<String> = all
        .into_iter()
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| patterns.iter().any(|pat| t.contains(pat.as_str()))))
        .map(|p| p.strip_prefix(crates).expect("under crates").to_string_lossy().replace('\\', "/"))
        .collect();
    found.sort();
    found
}

/// A source file's lines before its unit tests (`#[cfg(test)]` at the start of a line, which by this
/// workspace's habit opens the file's last module).
fn non_test_lines(text: &str) -> usize {
    text.lines().take_while(|l| l.trim_start() != "#[cfg(test)]").count()
}

#[test]
fn no_crate_holds_more_than_a_seventh_of_the_code() {
    // The monolith must not move to the bottom (issue 56): each area owns its rules and tables, so no one
    // crate, the domain and the store included, holds more than 15% of the workspace's non-test lines.
    let crates = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sizes: BTreeMap<String, usize> = BTreeMap::new();
    for entry in std::fs::read_dir(&crates).expect("crates").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if entry.path().join("src").is_dir() {
            sizes.insert(name.clone(), files(&name).iter().map(|(_, text)| non_test_lines(text)).sum());
        }
    }
    let total: usize = sizes.values().sum();
    assert!(total > 50_000, "the sources are read ({total} lines)");
    let heavy: Vec<(&String, usize)> =
        sizes.iter().filter(|(_, n)| **n * 100 > total * 15).map(|(k, n)| (k, *n * 100 / total)).collect();
    assert!(heavy.is_empty(), "crates over 15% of {total} non-test lines (name, percent): {heavy:?}");
}

/// The store's public modules: the primitives every area shares (among them who is calling: workspaces,
/// applications, API keys and signed clients' keys, resolved through the node cache on every request) and
/// the sealed-table shapes beside the one migration history. No area's repository: those live in their
/// crate's `tables/`.
const STORE_PRIMITIVES: &[&str] = &[
    "appends",
    "applications",
    "audit",
    "cache",
    "cluster",
    "copy_in",
    "credentials",
    "data_tables",
    "dialect",
    "evidence_db",
    "execution_clients",
    "fair",
    "hand_back",
    "idempotency",
    "operators",
    "outbox",
    "run_claims",
    "sealed_records",
    "sealed_tables",
    "seals",
    "set_aside",
    "tlog",
    "workspaces",
    "agent_tables",
    "investment_tables",
    "model_tables",
    "payment_tables",
];
#[test]
fn the_store_holds_its_primitives_and_no_area_repository() {
    let lib = source("fiscus-store/src/lib.rs");
    let modules: BTreeSet<&str> =
        lib.lines().filter_map(|l| l.strip_prefix("pub mod ").and_then(|m| m.strip_suffix(';'))).collect();
    assert!(modules.contains("seals"), "the store's modules are read");
    let unknown: Vec<&&str> = modules.iter().filter(|m| !STORE_PRIMITIVES.contains(m)).collect();
    assert!(unknown.is_empty(), "a new module in the store: an area's repository belongs in its crate: {unknown:?}");
    for moved in [
        "actions",
        "autonomy_evidence",
        "compute",
        "model_hub",
        "queues",
        "webhooks",
        "webhook_deliveries",
        "credits",
        "usage",
        "tool_invocations",
        "agent_requests",
        "themes",
        "lqm",
        "research",
        "calls",
        "workflows",
        "spaces",
        "a2a_tasks",
        "activity",
    ] {
        assert!(!modules.contains(moved), "`{moved}` is an area's repository and lives in its crate");
    }
}

#[test]
fn each_area_s_rules_live_in_its_crate() {
    // The domain keeps what every layer shares; an area's rules are the area's (issue 56). Each pair: where
    // the rules are, and where they must not be again.
    let moved = [
        ("fiscus-agents/src/rules/workflows/run.rs", "fiscus-domain/src/workflows/"),
        ("fiscus-agents/src/rules/spaces/mod.rs", "fiscus-domain/src/spaces/"),
        ("fiscus-agents/src/rules/calls.rs", "fiscus-domain/src/calls.rs"),
        ("fiscus-models/src/rules/lqm/lifecycle.rs", "fiscus-domain/src/lqm/"),
        ("fiscus-actions/src/rules/bank_files.rs", "fiscus-domain/src/bank_files.rs"),
        ("fiscus-investment/src/rules/pre_trade.rs", "fiscus-domain/src/investment/pre_trade.rs"),
        ("fiscus-investment/src/rules/model_portfolio.rs", "fiscus-domain/src/investment/model_portfolio.rs"),
        ("fiscus-platform/src/views.rs", "fiscus-domain/src/api/platform.rs"),
        ("fiscus-console/src/totp.rs", "fiscus-domain/src/totp.rs"),
        ("fiscus-http/src/http_signature.rs", "fiscus-domain/src/http_signature.rs"),
        ("fiscus-http/src/list.rs", "fiscus-domain/src/api/list.rs"),
        ("fiscus-kernel/src/change_ledger.rs", "fiscus-domain/src/change_ledger.rs"),
        ("fiscus-kernel/src/evidence/views.rs", "fiscus-domain/src/api/evidence.rs"),
        ("fiscus-kernel/src/evidence/offline.rs", "fiscus-domain/src/tlog/offline.rs"),
        ("fiscus-data-core/src/rules/mod.rs", "fiscus-domain/src/data/"),
        ("fiscus-data-core/src/book.rs", "fiscus-domain/src/investment/"),
    ];
    let all: Vec<String> = [
        "fiscus-domain",
        "fiscus-agents",
        "fiscus-models",
        "fiscus-actions",
        "fiscus-console",
        "fiscus-http",
        "fiscus-investment",
        "fiscus-kernel",
        "fiscus-data-core",
        "fiscus-platform",
    ]
    .iter()
    .flat_map(|k| files(k))
    .map(|(rel, _)| rel)
    .collect();
    for (home, not_again) in moved {
        assert!(all.iter().any(|rel| rel == home), "{home} is missing");
        let again: Vec<&String> = all.iter().filter(|rel| rel.starts_with(not_again)).collect();
        assert!(again.is_empty(), "an area's rules are back in the domain: {again:?}");
    }
}

/// The domain's types with an OpenAPI schema, derived or written by hand (`$name` is the field macro of
/// `fields.rs`, whose invocations are the bounded text types every body shares): the names several layers share (the store reads and writes
/// them, or more than one area answers with them), so their schema is written once, beside them. A view or a
/// request of one area lives with its routes; this list only shrinks (docs/known-gaps.md).
const SHARED_SCHEMAS: &[&str] = &[
    "ActionEventData",
    "ActionKind",
    "Actor",
    "ActorKind",
    "AppStatus",
    "ClientStatus",
    "ControlState",
    "$name",
    "Bounded",
    "Environment",
    "Event",
    "EventData",
    "EventType",
    "JobFailureCode",
    "JobKind",
    "JobState",
    "Owner",
    // The data of `approval.policy_changed`, a variant of the one event envelope every layer writes and reads.
    "PolicyEventData",
    "PromotionState",
    "Prose",
    "RunState",
    "SubscribedEventType",
    "Text",
    "WorkflowEventData",
];

#[test]
fn the_domain_derives_schemas_only_for_the_names_layers_share() {
    let mut derived = BTreeSet::new();
    for (rel, text) in files("fiscus-domain") {
        let mut after_derive = false;
        for line in text.lines() {
            let line = line.trim_start();
            if line.starts_with("#[derive(") && line.contains("ToSchema") {
                after_derive = true;
            } else if after_derive && (line.starts_with("pub struct ") || line.starts_with("pub enum ")) {
                let name = line.split_whitespace().nth(2).and_then(|n| n.split(['<', '{', '(']).next());
                derived.insert(name.unwrap_or_else(|| panic!("a derive with no type in {rel}")).to_string());
                after_derive = false;
            } else if line.contains("ToSchema for ") && line.starts_with("impl") {
                // A schema written by hand counts as one derived.
                let name = line.split("ToSchema for ").nth(1).and_then(|n| n.split(['<', ' ', '{']).next());
                derived.insert(name.unwrap_or_default().to_string());
            }
        }
    }
    assert!(derived.contains("ActionKind"), "the derives are read: {derived:?}");
    let unknown: Vec<&String> = derived.iter().filter(|n| !SHARED_SCHEMAS.contains(&n.as_str())).collect();
    assert!(
        unknown.is_empty(),
        "a new schema in the domain: an area's view or request lives with its routes: {unknown:?}"
    );
    let gone: Vec<&&str> = SHARED_SCHEMAS.iter().filter(|n| !derived.contains(**n)).collect();
    assert!(gone.is_empty(), "no longer derived in the domain: take them off the list so it only shrinks: {gone:?}");
}
