//! Features (`fiscus_quant::features`) against the pandas expressions users write (`features.json`, written
//! by `peers/generate.py`): the whole series of each instrument is computed, and the first 300 and last 300
//! dates compared, including where pandas has no value yet (NaN, `None` here).
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::features;

const REL: f64 = 1e-9;

#[test]
fn every_feature_matches_pandas_on_two_real_series() {
    let fx = fixture("features.json");
    for (name, s) in fx["series"].as_object().unwrap() {
        let file = s["file"].as_str().unwrap();
        let column = s["column"].as_str().unwrap().to_string();
        let dates = strings(&s["dates"]);
        let all = prices(file, &[column], "1900-01-01", "2100-01-01").column(0);
        assert_eq!(all.len() as u64, s["rows"].as_u64().unwrap(), "{name}: rows");
        let positions: Vec<usize> =
            s["positions"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        assert_eq!(positions.len(), dates.len());
        let computed = [
            ("return_1d", features::simple_return(&all).unwrap()),
            ("log_return_1d", features::log_return(&all).unwrap()),
            ("volatility_21d", features::rolling_volatility(&all, 21, 252.0).unwrap()),
            ("momentum_12_1", features::momentum(&all, 21, 252).unwrap()),
            ("drawdown", features::drawdown(&all).unwrap()),
        ];
        for (key, ours) in computed {
            let want = &s["values"][key];
            for (k, &i) in positions.iter().enumerate() {
                match (ours[i], want[k].as_f64()) {
                    (None, None) => {}
                    (Some(got), Some(w)) => {
                        let d = rel_diff(got, w);
                        assert!(d <= REL || (got - w).abs() < 1e-15, "{name} {key} {}: got {got}, want {w}", dates[k]);
                    }
                    (got, w) => panic!("{name} {key} {}: got {got:?}, pandas {w:?}", dates[k]),
                }
            }
        }
    }
}
