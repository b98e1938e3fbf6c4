//! The representations of a bulk read, chosen by `Accept` (RFC 9110 §12.5.1): JSON objects (the default),
//! one JSON object of column arrays (`application/vnd.fiscus.columns+json`), CSV (RFC 4180: a header row,
//! UTF-8, CRLF) and an Arrow IPC stream (`application/vnd.apache.arrow.stream`, which pandas, polars and
//! pyarrow read with no glue). A read offers them all or none; anything else is 406 naming what is offered.
//!
//! A page of any form carries the same headers: `Link: <…>; rel="next"` (RFC 8288) while there is more,
//! `Vary: Accept`, and the dataset it was served from (`Fiscus-Dataset`, `Fiscus-Dataset-Version`,
//! `Fiscus-Content-Hash`), so a CSV or Arrow file saved to disk can still be traced to its sealed source.

use crate::problem::ApiError;
use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, Date32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use fiscus_domain::error_code::ErrorCode;
use std::sync::Arc;

pub use arrow_schema::ArrowError;

/// `Accept: text/csv`.
pub const CSV: &str = "text/csv";
/// `Accept: application/vnd.apache.arrow.stream`: the Arrow IPC streaming format.
pub const ARROW: &str = "application/vnd.apache.arrow.stream";
/// `Accept: application/vnd.fiscus.columns+json`: the page with `data` as one array per column.
pub const COLUMNS: &str = "application/vnd.fiscus.columns+json";

/// A bulk read's representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Representation {
    Json,
    Columns,
    Csv,
    Arrow,
}

/// What a bulk read offers, in the order a tie between equal `q` values is broken.
const OFFERED: [(&str, Representation); 4] = [
    ("application/json", Representation::Json),
    (COLUMNS, Representation::Columns),
    (CSV, Representation::Csv),
    (ARROW, Representation::Arrow),
];

impl Representation {
    /// The representation `Accept` asks for: the offered type of highest `q` (the first named among
    /// equals; `*/*` and `application/*` are JSON, `text/*` CSV); JSON when there is no `Accept`; 406
    /// `not_acceptable` naming the offered types when it names none of them.
    pub fn negotiate(headers: &HeaderMap) -> Result<Representation, ApiError> {
        let values: Vec<&str> = headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect();
        if values.iter().all(|v| v.trim().is_empty()) {
            return Ok(Representation::Json);
        }
        let mut best: Option<(f32, Representation)> = None;
        for range in values.iter().flat_map(|v| v.split(',')) {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
                .map_or(Some(1.0), |(_, v)| v.trim().parse::<f32>().ok().filter(|q| (0.0..=1.0).contains(q)));
            let Some(q) = q.filter(|q| *q > 0.0) else { continue };
            let chosen = match media.as_str() {
                "*/*" | "application/*" => Some(Representation::Json),
                "text/*" => Some(Representation::Csv),
                m => OFFERED.iter().find(|(t, _)| *t == m).map(|(_, r)| *r),
            };
            if let Some(r) = chosen
                && best.is_none_or(|(bq, _)| q > bq)
            {
                best = Some((q, r));
            }
        }
        best.map(|(_, r)| r).ok_or_else(|| {
            ApiError::new(ErrorCode::NotAcceptable)
                .detail(format!("this read is offered as {}", Representation::offered().join(", ")))
                .with("offered", Representation::offered())
        })
    }

    /// Every media type a bulk read offers.
    pub fn offered() -> Vec<&'static str> {
        OFFERED.iter().map(|(t, _)| *t).collect()
    }

    pub fn media_type(self) -> &'static str {
        match self {
            Representation::Json => "application/json",
            Representation::Columns => COLUMNS,
            Representation::Csv => "text/csv; charset=utf-8; header=present",
            Representation::Arrow => ARROW,
        }
    }
}

/// What a column holds, as a bulk read documents its columns (the composition writes the CSV, Arrow and
/// column-JSON schemas from these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Date,
    Float,
    Int,
    Text,
}

/// A documented column: its name and type.
pub type ColumnSpec = (&'static str, ColumnType);

/// One column's values.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// `YYYY-MM-DD` dates: Arrow `date32` (days since 1970-01-01), text in CSV and JSON.
    Date(Vec<String>),
    /// Arrow `float64`; empty in CSV and `null` in JSON where absent.
    Float(Vec<Option<f64>>),
    Int(Vec<Option<i64>>),
    /// Arrow `utf8`.
    Text(Vec<Option<String>>),
}

impl Values {
    pub fn column_type(&self) -> ColumnType {
        match self {
            Values::Date(_) => ColumnType::Date,
            Values::Float(_) => ColumnType::Float,
            Values::Int(_) => ColumnType::Int,
            Values::Text(_) => ColumnType::Text,
        }
    }

    fn len(&self) -> usize {
        match self {
            Values::Date(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Int(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }
}

/// Named columns of equal length: a page of a bulk read in columnar form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    columns: Vec<(&'static str, Values)>,
}

impl Table {
    pub fn new() -> Table {
        Table::default()
    }

    /// Adds a column; every column has as many values as the first.
    pub fn column(mut self, name: &'static str, values: Values) -> Table {
        debug_assert!(self.columns.first().is_none_or(|(_, v)| v.len() == values.len()), "column {name}");
        self.columns.push((name, values));
        self
    }

    /// The columns as documented: names and types in order.
    pub fn spec(&self) -> Vec<ColumnSpec> {
        self.columns.iter().map(|(n, v)| (*n, v.column_type())).collect()
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }

    /// The header row and every row, RFC 4180: fields with a comma, quote or line break quoted, quotes
    /// doubled, CRLF after each row. Numbers are written in the shortest form that reads back to the same
    /// double; an absent value is an empty field.
    pub fn csv(&self) -> Vec<u8> {
        let mut out = csv_header(&self.spec());
        for row in 0..self.rows() {
            let mut r = CsvRow::new(&mut out);
            for (_, values) in &self.columns {
                match values {
                    Values::Date(v) => r.date(&v[row]),
                    Values::Float(v) => r.float(v[row]),
                    Values::Int(v) => r.int(v[row]),
                    Values::Text(v) => r.text(v[row].as_deref()),
                }
            }
            r.end();
        }
        out
    }

    /// An Arrow IPC stream of one record batch (the schema, the batch, the end-of-stream marker), every
    /// column nullable but dates.
    pub fn arrow(&self) -> Result<Vec<u8>, ArrowError> {
        stream(&self.batch()?)
    }

    /// The table as one Arrow record batch: a whole series' batch can be kept and sliced per page without
    /// copying (`RecordBatch::slice`).
    pub fn batch(&self) -> Result<RecordBatch, ArrowError> {
        let mut fields = Vec::with_capacity(self.columns.len());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.columns.len());
        for (name, values) in &self.columns {
            let (field, array): (Field, ArrayRef) = match values {
                Values::Date(v) => {
                    let days: Vec<i32> = v.iter().map(|d| days_since_epoch(d).unwrap_or(0)).collect();
                    (Field::new(*name, DataType::Date32, false), Arc::new(Date32Array::from(days)))
                }
                Values::Float(v) => {
                    let mut b = Float64Builder::with_capacity(v.len());
                    b.extend(v.iter().copied());
                    (Field::new(*name, DataType::Float64, true), Arc::new(b.finish()))
                }
                Values::Int(v) => {
                    let mut b = Int64Builder::with_capacity(v.len());
                    b.extend(v.iter().copied());
                    (Field::new(*name, DataType::Int64, true), Arc::new(b.finish()))
                }
                Values::Text(v) => {
                    let mut b = StringBuilder::with_capacity(v.len(), v.iter().flatten().map(String::len).sum());
                    for s in v {
                        b.append_option(s.as_deref());
                    }
                    (Field::new(*name, DataType::Utf8, true), Arc::new(b.finish()))
                }
            };
            fields.push(field);
            arrays.push(array);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
    }

    /// The columns as one JSON object of arrays, in column order.
    pub fn json_columns(&self) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::Value;
        let number = |x: &Option<f64>| x.and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number);
        self.columns
            .iter()
            .map(|(name, values)| {
                let array: Vec<Value> = match values {
                    Values::Date(v) => v.iter().map(|d| Value::String(d.clone())).collect(),
                    Values::Float(v) => v.iter().map(number).collect(),
                    Values::Int(v) => v.iter().map(|x| x.map_or(Value::Null, Value::from)).collect(),
                    Values::Text(v) => v.iter().map(|s| s.clone().map_or(Value::Null, Value::String)).collect(),
                };
                (name.to_string(), Value::Array(array))
            })
            .collect()
    }
}

/// An Arrow IPC stream of `batch`: its schema, the batch (only the rows of a sliced batch), the end marker.
pub fn stream(batch: &RecordBatch) -> Result<Vec<u8>, ArrowError> {
    let width: usize = batch.columns().iter().map(|c| c.get_buffer_memory_size() / c.len().max(1)).sum();
    let mut out = Vec::with_capacity(512 + batch.num_rows() * width.max(8));
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut out, batch.schema_ref())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(out)
}

/// The CSV header row of `columns`.
pub fn csv_header(columns: &[ColumnSpec]) -> Vec<u8> {
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let mut out = names.join(",").into_bytes();
    out.extend_from_slice(b"\r\n");
    out
}

/// One CSV row written cell by cell (RFC 4180): a field with a comma, quote or line break quoted, quotes
/// doubled; numbers in the shortest form that reads back to the same double; an absent value empty.
pub struct CsvRow<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> CsvRow<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> CsvRow<'a> {
        CsvRow { out, first: true }
    }

    fn next(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    pub fn float(&mut self, x: Option<f64>) {
        use std::io::Write;
        self.next();
        if let Some(x) = x {
            let _ = write!(self.out, "{x}");
        }
    }

    pub fn int(&mut self, x: Option<i64>) {
        use std::io::Write;
        self.next();
        if let Some(x) = x {
            let _ = write!(self.out, "{x}");
        }
    }

    /// A text cell. One that a spreadsheet would take for a formula (beginning with `=`, `+`, `-`, `@`, a
    /// tab or a carriage return) is written with a leading `'`, as OWASP's "CSV Injection" page recommends,
    /// so a person opening an export runs nothing an import put in it; the cell then reads as the text it
    /// was with a `'` before it. Numbers and dates are written by their own methods and never escaped.
    pub fn text(&mut self, s: Option<&str>) {
        self.next();
        let Some(s) = s else { return };
        let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
        if formula || s.contains([',', '"', '\r', '\n']) {
            self.out.push(b'"');
            if formula {
                self.out.push(b'\'');
            }
            self.out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
            self.out.push(b'"');
        } else {
            self.out.extend_from_slice(s.as_bytes());
        }
    }

    /// A date cell (`YYYY-MM-DD`), written as it is.
    pub fn date(&mut self, d: &str) {
        self.next();
        self.out.extend_from_slice(d.as_bytes());
    }

    /// Ends the row with CRLF.
    pub fn end(self) {
        self.out.extend_from_slice(b"\r\n");
    }
}

/// Days from 1970-01-01 to a `YYYY-MM-DD` date (proleptic Gregorian; Howard Hinnant's `days_from_civil`).
pub fn days_since_epoch(date: &str) -> Option<i32> {
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = date[..4].parse().ok()?;
    let m: i64 = date[5..7].parse().ok()?;
    let d: i64 = date[8..].parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).ok()
}

/// The dataset a page was served from, for its headers.
pub struct Source<'a> {
    pub dataset: i64,
    pub version: i64,
    pub content_hash: &'a str,
}

/// The headers every form of a page carries: `Vary`, `Link` to the next page (the request's own URI with
/// `after_id` set to `next`), and the dataset.
pub fn page_headers(uri: &Uri, next: Option<&str>, source: Option<Source<'_>>) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(header::VARY, HeaderValue::from_static("accept"));
    if let Some(cursor) = next {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (k, v) in form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
            if k != "after_id" {
                query.append_pair(&k, &v);
            }
        }
        query.append_pair("after_id", cursor);
        if let Ok(v) = HeaderValue::from_str(&format!("<{}?{}>; rel=\"next\"", uri.path(), query.finish())) {
            h.insert(header::LINK, v);
        }
    }
    if let Some(s) = source {
        h.insert("fiscus-dataset", HeaderValue::from(s.dataset));
        h.insert("fiscus-dataset-version", HeaderValue::from(s.version));
        if let Ok(v) = HeaderValue::from_str(s.content_hash) {
            h.insert("fiscus-content-hash", v);
        }
    }
    h
}

/// A CSV, Arrow or columns-JSON page: `body` with its media type and `headers`. (The JSON form is each
/// read's own.)
pub fn respond(representation: Representation, headers: HeaderMap, body: impl Into<Bytes>) -> Response {
    let mut response = (headers, axum::body::Body::from(body.into())).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(representation.media_type()));
    response
}

/// A page whose body is several buffers sent one after another without being joined (a header row and a
/// slice of kept rows).
pub fn respond_chunks<const N: usize>(
    representation: Representation,
    headers: HeaderMap,
    body: [Bytes; N],
) -> Response {
    let mut response = (headers, axum::body::Body::new(crate::body::Chunks::new(body))).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(representation.media_type()));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> Result<Representation, ApiError> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")));
        Representation::negotiate(&h)
    }

    #[test]
    fn accept_chooses_by_q_then_by_order_and_refuses_what_is_not_offered() {
        assert_eq!(Representation::negotiate(&HeaderMap::new()).ok(), Some(Representation::Json));
        assert_eq!(accept("text/csv").ok(), Some(Representation::Csv));
        assert_eq!(accept("Application/Vnd.Apache.Arrow.Stream").ok(), Some(Representation::Arrow));
        assert_eq!(accept("text/csv;q=0.5, application/vnd.apache.arrow.stream").ok(), Some(Representation::Arrow));
        assert_eq!(accept("text/html, */*;q=0.1").ok(), Some(Representation::Json));
        assert_eq!(accept("text/*").ok(), Some(Representation::Csv));
        assert_eq!(accept(COLUMNS).ok(), Some(Representation::Columns));
        let refused = accept("text/html, application/xml;q=0.9").err().map(|e| e.code);
        assert_eq!(refused, Some(ErrorCode::NotAcceptable));
        assert_eq!(accept("text/csv;q=0").err().map(|e| e.code), Some(ErrorCode::NotAcceptable));
    }

    #[test]
    fn csv_quotes_what_needs_it_and_leaves_absent_values_empty() {
        let t = Table::new()
            .column("date", Values::Date(vec!["2020-01-02".into(), "2020-01-03".into()]))
            .column("close", Values::Float(vec![Some(1.5), None]))
            .column("name", Values::Text(vec![Some("a, \"b\"".into()), None]));
        assert_eq!(
            String::from_utf8(t.csv()).ok().as_deref(),
            Some("date,close,name\r\n2020-01-02,1.5,\"a, \"\"b\"\"\"\r\n2020-01-03,,\r\n")
        );
        let json = serde_json::Value::Object(t.json_columns());
        assert_eq!(json["close"], serde_json::json!([1.5, null]));
    }

    #[test]
    fn text_that_a_spreadsheet_would_run_is_escaped_and_numbers_are_not() {
        let cells =
            ["=HYPERLINK(\"http://x\")", "+SUM(1+1)", "-2+3", "@SUM(A1)", "=cmd|' /C calc'!A0", "\tx", "\rx", "a=b"];
        let t = Table::new()
            .column("text", Values::Text(cells.iter().map(|c| Some((*c).to_string())).collect()))
            .column("amount", Values::Float(vec![Some(-1.5); cells.len()]));
        let csv = String::from_utf8(t.csv()).expect("utf8");
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[1], "\"'=HYPERLINK(\"\"http://x\"\")\",-1.5");
        assert_eq!(lines[2], "\"'+SUM(1+1)\",-1.5");
        assert_eq!(lines[3], "\"'-2+3\",-1.5");
        assert_eq!(lines[4], "\"'@SUM(A1)\",-1.5");
        assert_eq!(lines[5], "\"'=cmd|' /C calc'!A0\",-1.5");
        assert_eq!(lines[6], "\"'\tx\",-1.5");
        assert_eq!(lines[8], "a=b,-1.5", "only a leading character makes a formula");
        // Read back by a CSV reader, each escaped cell is the text with a `'` before it.
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let read: Vec<String> = reader.records().map(|r| r.expect("record")[0].to_string()).collect();
        assert_eq!(read[0], "'=HYPERLINK(\"http://x\")");
        assert_eq!(read[6], "'\rx");
    }

    #[test]
    fn dates_count_days_from_the_epoch() {
        assert_eq!(days_since_epoch("1970-01-01"), Some(0));
        assert_eq!(days_since_epoch("2000-03-01"), Some(11_017));
        assert_eq!(days_since_epoch("1969-12-31"), Some(-1));
        assert_eq!(days_since_epoch("2020-1-01"), None);
    }

    #[test]
    fn an_arrow_stream_starts_with_its_schema_and_ends_with_the_end_marker() {
        let t = Table::new()
            .column("date", Values::Date(vec!["2020-01-02".into()]))
            .column("x", Values::Float(vec![Some(2.0)]));
        let bytes = t.arrow().unwrap_or_default();
        assert_eq!(&bytes[..4], &[0xff; 4]);
        assert_eq!(&bytes[bytes.len() - 8..], &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    }
}
