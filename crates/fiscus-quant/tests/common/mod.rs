//! Test-only IO: reading the committed peer fixtures and the shipped data CSVs.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

use fiscus_quant::Matrix;
use serde_json::Value;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

pub fn matrix(v: &Value) -> Matrix {
    let rows: Vec<Vec<f64>> = v.as_array().unwrap().iter().map(floats).collect();
    Matrix::from_rows(&rows).unwrap()
}

/// Values of a JSON object in the order of `keys`.
pub fn by_keys(v: &Value, keys: &[String]) -> Vec<f64> {
    keys.iter().map(|k| v[k].as_f64().unwrap()).collect()
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

/// Prices of `columns` from a CSV with an ISO `Date` first column, rows with first <= Date <= last.
pub fn prices(file: &str, columns: &[String], first: &str, last: &str) -> Matrix {
    let text = std::fs::read_to_string(repo_root().join(file)).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let idx: Vec<usize> = columns.iter().map(|c| header.iter().position(|h| h == c).unwrap()).collect();
    let mut rows = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        let date = cells[0];
        if date >= first && date <= last {
            rows.push(idx.iter().map(|&i| cells[i].parse::<f64>().unwrap()).collect::<Vec<f64>>());
        }
    }
    Matrix::from_rows(&rows).unwrap()
}

/// The returns panel a fixture's `inputs` block describes, checked against its `checks` sums.
pub fn fixture_returns(fx: &Value) -> (Vec<String>, Matrix) {
    let inputs = &fx["inputs"];
    let columns = strings(&inputs["columns"]);
    let p = prices(
        inputs["file"].as_str().unwrap(),
        &columns,
        inputs["price_rows"]["first_date"].as_str().unwrap(),
        inputs["price_rows"]["last_date"].as_str().unwrap(),
    );
    assert_eq!(p.rows() as u64, inputs["price_rows"]["count"].as_u64().unwrap());
    let r = fiscus_quant::returns::simple_returns_matrix(&p).unwrap();
    if let Some(sums) = inputs["checks"]["sum_of_returns"].as_object() {
        for (j, c) in columns.iter().enumerate() {
            let s: f64 = r.column(j).iter().sum();
            assert!((s - sums[c].as_f64().unwrap()).abs() < 1e-12, "{c}");
        }
    }
    (columns, r)
}

pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

pub fn rel_diff(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { (a - b).abs() / b.abs().max(1e-300) }
}
