//! The columnar forms of the bulk reads in the document: for each read of [`BULK_READS`], its 200 response
//! offers CSV, an Arrow IPC stream and column JSON beside its JSON page (`fiscus_http::columnar`), with the
//! columns each form carries, the headers every page carries, and 406 for an `Accept` it does not offer.
//! A compute job's read offers the same forms of a model run's series ([`MODEL_RUN_SERIES`]).

use fiscus_http::columnar::{ARROW, COLUMNS, CSV, ColumnSpec, ColumnType};
use serde_json::{Map, Value, json};

/// Every bulk read, by operation id, with its columns.
pub const BULK_READS: &[(&str, &[ColumnSpec])] = &[
    ("get_data_instruments_uid_prices", fiscus_data::routes::instruments::PRICE_COLUMNS),
    ("get_data_economics_series_key_observations", fiscus_data::routes::economics::OBSERVATION_COLUMNS),
    ("get_quant_features_key_values", fiscus_data::routes::features::VALUE_COLUMNS),
    ("get_financial_transactions", fiscus_data::routes::financial::TRANSACTION_COLUMNS),
    ("get_finance_core_journals", fiscus_data::routes::finance_core::JOURNAL_COLUMNS),
];

/// The read that serves a model run's series in the columnar forms, and their columns (`index` always,
/// the others those the run's model gives).
pub const MODEL_RUN_SERIES: (&str, &[ColumnSpec]) =
    ("get_quant_compute_jobs_uid", fiscus_models::routes::quant::compute::SERIES_COLUMNS);

/// The headers of a bulk read's page, components beside the shared ones (`contract.rs` adds them).
pub fn headers() -> Value {
    let header = |description: &str, schema: Value| json!({ "description": description, "schema": schema });
    json!({
        "Vary": header("`accept`: the representation follows the `Accept` header.", json!({ "type": "string" })),
        "Fiscus-Dataset": header("The id of the dataset the page was served from.", json!({ "type": "integer", "minimum": 1 })),
        "Fiscus-Dataset-Version": header("That dataset's version.", json!({ "type": "integer", "minimum": 1 })),
        "Fiscus-Content-Hash": header("That dataset's sealed content hash (`sha256:` and 64 hex digits).", json!({ "type": "string", "pattern": "^sha256:[0-9a-f]{64}$" })),
    })
}

fn item(t: ColumnType) -> Value {
    match t {
        ColumnType::Date => json!({ "type": "string", "format": "date" }),
        ColumnType::Float => json!({ "type": ["number", "null"] }),
        ColumnType::Int => json!({ "type": ["integer", "null"] }),
        ColumnType::Text => json!({ "type": ["string", "null"] }),
    }
}

/// The column-JSON schema of a page whose JSON schema is `page`: the same members, with `data` one array
/// per column.
fn columns_schema(page: &Value, columns: &[ColumnSpec]) -> Value {
    let mut schema = page.clone();
    let properties: Map<String, Value> =
        columns.iter().map(|(name, t)| (name.to_string(), json!({ "type": "array", "items": item(*t) }))).collect();
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    schema["properties"]["data"] = json!({
        "description": "One array per column, every array as long as the page.",
        "type": "object",
        "properties": properties,
        "required": names,
        "additionalProperties": false,
    });
    if let Some(title) = schema.get("title").and_then(Value::as_str).map(|t| format!("{t} (columns)")) {
        schema["title"] = json!(title);
    }
    schema
}

/// Adds the columnar forms of a model run's series to the compute job's read.
fn apply_series(doc: &mut Value) {
    let (id, columns) = MODEL_RUN_SERIES;
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else { return };
    let Some(path) = paths.iter().find(|(_, item)| item["get"]["operationId"] == id).map(|(p, _)| p.clone()) else {
        return;
    };
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let properties: Map<String, Value> =
        columns.iter().map(|(name, t)| (name.to_string(), json!({ "type": "array", "items": item(*t) }))).collect();
    let pointer = format!("/paths/{}/get", path.replace('~', "~0").replace('/', "~1"));
    let Some(op) = doc.pointer_mut(&pointer) else { return };
    let Some(ok) = op.pointer_mut("/responses/200") else { return };
    ok["content"][COLUMNS] = json!({ "schema": {
        "title": "ModelRunSeries",
        "type": "object",
        "required": ["object", "job", "data"],
        "properties": {
            "object": { "type": "string", "enum": ["model_run_series"] },
            "job": { "type": "string", "pattern": "^cjb_[0-9A-HJKMNP-TV-Z]{26}$" },
            "data": {
                "description": "One array per column, every array as long as the series: `index`, then the series the run's model gives.",
                "type": "object",
                "properties": properties,
                "required": ["index"],
                "additionalProperties": false,
            },
        },
        "additionalProperties": false,
    }});
    ok["content"][CSV] = json!({
        "schema": { "type": "string", "description": format!("RFC 4180, UTF-8, CRLF, a header row: `index`, then those of {} the run's model gives.", names[1..].join(", ")) },
        "example": "index,forecast\r\n0,4790.5\r\n",
    });
    ok["content"][ARROW] = json!({
        "schema": { "type": "string", "format": "binary", "description": "An Arrow IPC stream of one record batch: `index` (`int64`), then the run's series (`float64`)." },
    });
    if let Some(Value::Object(headers)) = ok.as_object_mut().map(|o| o.entry("headers").or_insert_with(|| json!({}))) {
        headers.insert("Vary".into(), json!({ "$ref": "#/components/headers/Vary" }));
    }
    if let Some(description) = op.get("description").and_then(Value::as_str).map(str::to_string) {
        op["description"] = json!(format!(
            "{description}\n\nBy `Accept`: `application/json` (default); for a finished model run also `{COLUMNS}` (`data` as one array \
             per column), `{CSV}` or `{ARROW}`, the columns `index` (0, 1, …) and each series of its output ({}). Anything else, \
             or a columnar form of a job without a series, is 406 `not_acceptable`.",
            names[1..].join(", ")
        ));
    }
    if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
        responses.insert(
            "406".into(),
            json!({ "description": "`not_acceptable`: `Accept` names no representation offered, or a columnar one of a job without a series (the problem's `offered` lists what is)" }),
        );
    }
}

/// Adds the columnar forms to every bulk read of `doc`.
pub fn apply(doc: &mut Value) {
    apply_series(doc);
    let Some(paths) = doc.get("paths").and_then(Value::as_object).cloned() else { return };
    for (path, item) in paths {
        let Some(op) = item.get("get") else { continue };
        let Some(id) = op["operationId"].as_str() else { continue };
        let Some((_, columns)) = BULK_READS.iter().find(|(op_id, _)| *op_id == id) else { continue };
        let page = match op.pointer("/responses/200/content/application~1json/schema/$ref").and_then(Value::as_str) {
            Some(r) => doc.pointer(r.trim_start_matches('#')).cloned().unwrap_or_default(),
            None => op.pointer("/responses/200/content/application~1json/schema").cloned().unwrap_or_default(),
        };
        let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
        let csv_example = format!("{}\r\n", names.join(","));
        let pointer = format!("/paths/{}/get", path.replace('~', "~0").replace('/', "~1"));
        let Some(op) = doc.pointer_mut(&pointer) else { continue };
        let Some(ok) = op.pointer_mut("/responses/200") else { continue };
        ok["content"][COLUMNS] = json!({ "schema": columns_schema(&page, columns) });
        ok["content"][CSV] = json!({
            "schema": { "type": "string", "description": format!("RFC 4180, UTF-8, CRLF, a header row: {}; an absent value is an empty field. A text cell beginning with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'` (OWASP, CSV Injection), so a spreadsheet opening the file runs no formula; numbers and dates are never changed.", names.join(", ")) },
            "example": csv_example,
        });
        ok["content"][ARROW] = json!({
            "schema": { "type": "string", "format": "binary", "description": format!("An Arrow IPC stream of one record batch with the columns {} (dates `date32`, numbers `float64`).", names.join(", ")) },
        });
        let headers = ok.as_object_mut().map(|o| o.entry("headers").or_insert_with(|| json!({})));
        if let Some(Value::Object(headers)) = headers {
            for name in ["Vary", "Fiscus-Dataset", "Fiscus-Dataset-Version", "Fiscus-Content-Hash"] {
                headers.insert(name.into(), json!({ "$ref": format!("#/components/headers/{name}") }));
            }
        }
        if let Some(description) = op.get("description").and_then(Value::as_str).map(str::to_string) {
            op["description"] = json!(format!(
                "{description}\n\nBy `Accept`: `application/json` (default), `{COLUMNS}` (`data` as one array per column), `{CSV}` or `{ARROW}`; \
                 every form pages alike (`Link: <…>; rel=\"next\"` while there is more) and names its dataset in `Fiscus-Dataset`, \
                 `Fiscus-Dataset-Version` and `Fiscus-Content-Hash`. Anything else is 406 `not_acceptable`."
            ));
        }
        let responses = op.get_mut("responses").and_then(Value::as_object_mut);
        if let Some(responses) = responses {
            responses.insert(
                "406".into(),
                json!({ "description": "`not_acceptable`: `Accept` names none of the representations offered (the problem's `offered` lists them)" }),
            );
        }
    }
}
