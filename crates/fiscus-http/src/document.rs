//! The service's own OpenAPI document, built once when the router is assembled (`app::build`) and handed
//! down in the state to what reads it: the query checks (which parameters each operation declares, which
//! are integers), the agent tools generated from it, the capabilities a caller is shown.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

pub struct ApiDocument {
    json: Value,
    /// Query parameter names by operation id (so the server accepts exactly what the document declares).
    parameters: HashMap<String, Vec<String>>,
    /// `(path, name)` of the query parameters typed `integer` (no path has two parameters of one name with
    /// different types).
    integers: HashSet<(String, String)>,
    /// The ids of the operations it documents.
    served: BTreeSet<String>,
}

impl ApiDocument {
    /// Reads what the checks need from `json` in one pass.
    pub fn new(json: Value) -> ApiDocument {
        let mut parameters = HashMap::new();
        let mut integers = HashSet::new();
        let mut served = BTreeSet::new();
        for (path, item) in json["paths"].as_object().into_iter().flatten() {
            for op in ["get", "post", "delete"].iter().filter_map(|m| item.get(*m)) {
                let mut names = Vec::new();
                for p in op["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == "query") {
                    let Some(name) = p["name"].as_str() else { continue };
                    let types = &p["schema"]["type"];
                    if types == "integer" || types.as_array().is_some_and(|t| t.iter().any(|t| t == "integer")) {
                        integers.insert((path.clone(), name.to_string()));
                    }
                    names.push(name.to_string());
                }
                if let Some(id) = op["operationId"].as_str() {
                    parameters.insert(id.to_string(), names);
                    served.insert(id.to_string());
                }
            }
        }
        ApiDocument { json, parameters, integers, served }
    }

    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The query parameters `operation_id` declares (none for an operation the document lacks).
    pub fn query_parameters(&self, operation_id: &str) -> &[String] {
        self.parameters.get(operation_id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether the query parameter `name` of the path template `path` is typed `integer`.
    pub fn is_integer(&self, path: &str, name: &str) -> bool {
        self.integers.contains(&(path.to_string(), name.to_string()))
    }

    /// Whether this build serves the operation `id`.
    pub fn serves(&self, id: &str) -> bool {
        self.served.contains(id)
    }
}
