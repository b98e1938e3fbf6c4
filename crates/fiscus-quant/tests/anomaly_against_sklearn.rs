//! Isolation forest against scikit-learn and robust z-scores against scipy.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use fiscus_quant::Matrix;
use fiscus_quant::anomaly::{self, IsolationForest, IsolationForestConfig};

fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        for k in i..=j {
            r[idx[k]] = (i + j) as f64 / 2.0;
        }
        i = j + 1;
    }
    r
}

fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (m(&ra), m(&rb));
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn average_path_length_is_exactly_scikit_learns_c_of_n() {
    let fx = fixture("isolation_forest.json");
    let ns = floats(&fx["c_n"]["n"]);
    let cs = floats(&fx["c_n"]["c"]);
    for (n, c) in ns.iter().zip(&cs) {
        assert!((anomaly::average_path_length(*n as usize) - c).abs() <= 1e-15 * c.max(1.0));
    }
}

#[test]
fn isolation_forest_ranks_like_scikit_learn_and_finds_the_planted_anomalies() {
    let fx = fixture("isolation_forest.json");
    for (key, k_overlap_min) in [("dataset_2d", 10), ("dataset_1d_amounts", 6)] {
        let d = &fx[key];
        let x = match d["X"][0].as_array() {
            Some(_) => matrix(&d["X"]),
            None => Matrix::from_row_major(d["X"].as_array().unwrap().len(), 1, floats(&d["X"])).unwrap(),
        };
        let forest = IsolationForest::fit(&x, IsolationForestConfig { trees: 100, max_samples: 256, seed: 0 }).unwrap();
        let scores = forest.scores(&x).unwrap();
        let sk: Vec<f64> = floats(&d["results"]["score_samples"]).iter().map(|s| -s).collect();
        let rho = spearman(&scores, &sk);
        let planted: Vec<usize> = floats(&d["planted_anomaly_indices"]).iter().map(|v| *v as usize).collect();
        let top = IsolationForest::top_k(&scores, planted.len());
        let overlap = top.iter().filter(|i| planted.contains(i)).count();
        let sk_overlap = d["results"]["top_k_overlap_with_planted"].as_u64().unwrap();
        eprintln!("{key}: Spearman {rho:.4}, top-{} overlap {overlap} (scikit-learn {sk_overlap})", planted.len());
        assert!(rho >= 0.9);
        assert!(overlap >= k_overlap_min);
    }
}

#[test]
fn robust_z_scores_match_scipy() {
    let fx = fixture("robust_zscore.json");
    let small = &fx["small_embedded"];
    let z = anomaly::robust_z_scores(&floats(&small["x"])).unwrap();
    assert!(max_abs_diff(&z.scores, &floats(&small["z"])) < 1e-14);
    assert_eq!(z.outliers(3.5), vec![4, 7]);
    let (_, r) = fixture_returns(&fx);
    let a = &fx["aapl_daily_returns"];
    let z = anomaly::robust_z_scores(&r.column(0)).unwrap();
    assert_eq!(z.median, a["median"].as_f64().unwrap());
    assert!(rel_diff(z.scale, a["mad_normal"].as_f64().unwrap()) < 1e-15);
    let want = floats(&a["z"]);
    let worst = z.scores.iter().zip(&want).map(|(g, w)| rel_diff(*g, *w)).fold(0.0, f64::max);
    assert!(worst < 1e-12, "{worst:e}");
    let idx: Vec<usize> = floats(&a["indices_abs_z_gt_3_5"]).iter().map(|v| *v as usize).collect();
    assert_eq!(z.outliers(3.5), idx);
}
