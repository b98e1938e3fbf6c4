//! `fiscus catalogue check`: the change ledger. Compares the operation catalogue, the scope registry and the
//! OpenAPI document the service serves, and counts mismatches (which must be 0).

use fiscus_domain::catalogue::{self, Method, OPERATIONS, Source};
use fiscus_domain::scopes::{self, SCOPES};
use serde_json::Value;
use std::collections::BTreeSet;

pub struct CatalogueReport {
    pub operations: usize,
    pub seed_operations: usize,
    pub added_operations: usize,
    pub paths: usize,
    pub scopes: usize,
    pub scopes_used: usize,
    pub served: Vec<&'static str>,
    pub not_yet_served: Vec<&'static str>,
    pub mismatches: Vec<String>,
}

/// The report of the document `doc` (the service's own: `app::openapi_document()` or the one the state
/// hands down).
pub fn check(doc: &Value) -> CatalogueReport {
    let mut mismatches = Vec::new();
    for op in OPERATIONS {
        if let Some(scope) = op.scope
            && !scopes::is_registered(scope)
        {
            mismatches.push(format!("{} uses unregistered scope {scope}", op.id));
        }
    }
    let mut served = BTreeSet::new();
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for (path, item) in paths {
            for (key, method) in [("get", Method::Get), ("post", Method::Post), ("delete", Method::Delete)] {
                let Some(op) = item.get(key) else { continue };
                let Some(entry) = catalogue::find(method, path) else {
                    mismatches.push(format!("{} {path} is served but not catalogued", method.as_str()));
                    continue;
                };
                served.insert(entry.id);
                let documented: Option<&str> = op.pointer("/security/1/oauth2/0").and_then(Value::as_str);
                if documented != entry.scope {
                    mismatches.push(format!(
                        "{} documents scope {:?} but the catalogue says {:?}",
                        entry.id, documented, entry.scope
                    ));
                }
                if op.get("operationId").and_then(Value::as_str) != Some(entry.id) {
                    mismatches.push(format!("{} has another operationId in the OpenAPI document", entry.id));
                }
            }
        }
    }
    let paths: BTreeSet<String> = OPERATIONS.iter().map(|op| op.full_path()).collect();
    let used: BTreeSet<&str> = OPERATIONS.iter().filter_map(|op| op.scope).collect();
    CatalogueReport {
        operations: OPERATIONS.len(),
        seed_operations: OPERATIONS.iter().filter(|op| op.source == Source::Seed).count(),
        added_operations: OPERATIONS.iter().filter(|op| op.source == Source::Added).count(),
        paths: paths.len(),
        scopes: SCOPES.len(),
        scopes_used: used.len(),
        not_yet_served: OPERATIONS.iter().map(|op| op.id).filter(|id| !served.contains(id)).collect(),
        served: served.into_iter().collect(),
        mismatches,
    }
}
