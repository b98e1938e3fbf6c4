//! Isolation forest (Liu, Ting & Zhou 2008) with scikit-learn's conventions: each tree is grown on a
//! sub-sample of `min(256, n)` rows drawn without replacement, to depth `ceil(log2(sub-sample))`, splitting
//! on a uniformly chosen non-constant feature at a uniform threshold between the node's min and max. The
//! path length of a point is its leaf depth plus `c(leaf size)`, and the score is `2^(−E[h]/c(ψ))`.
//!
//! Scores here are the paper's (higher = more anomalous, 0.5 is scikit-learn's `contamination='auto'`
//! threshold); scikit-learn's `score_samples` is exactly the negative. The trees are random, so only ranks
//! can be compared with scikit-learn, not values.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::Result;
use crate::input;
use crate::matrix::Matrix;

/// Euler-Mascheroni constant, as in scikit-learn's `_average_path_length`.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// The expected path length `c(n)` of an unsuccessful binary-search-tree lookup among n points.
pub fn average_path_length(n: usize) -> f64 {
    match n {
        0 | 1 => 0.0,
        2 => 1.0,
        _ => {
            let n = n as f64;
            2.0 * ((n - 1.0).ln() + EULER_GAMMA) - 2.0 * (n - 1.0) / n
        }
    }
}

/// Forest size, sub-sample size and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsolationForestConfig {
    pub trees: usize,
    /// Rows per tree; capped at the number of rows (scikit-learn's `max_samples='auto'` is 256).
    pub max_samples: usize,
    pub seed: u64,
}

impl Default for IsolationForestConfig {
    fn default() -> Self {
        Self { trees: 100, max_samples: 256, seed: 0 }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Split {
        feature: usize,
        threshold: f64,
        left: usize,
        right: usize,
    },
    /// A leaf stores its whole contribution to the path length, `depth + c(size)`, so that scoring is a
    /// bare descent with no logarithms.
    Leaf {
        path_length: f64,
    },
}

/// A fitted forest.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationForest {
    trees: Vec<Vec<Node>>,
    features: usize,
    normaliser: f64,
}

impl IsolationForest {
    /// Grows the forest on the rows of `x` (rows = observations, columns = features).
    pub fn fit(x: &Matrix, config: IsolationForestConfig) -> Result<Self> {
        x.check_finite("x")?;
        input::at_least("trees", 1, config.trees)?;
        input::at_least("max_samples", 2, config.max_samples)?;
        input::at_least("rows", 2, x.rows())?;
        let psi = config.max_samples.min(x.rows());
        let max_depth = (psi as f64).log2().ceil() as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let mut all: Vec<usize> = (0..x.rows()).collect();
        let mut trees = Vec::with_capacity(config.trees);
        for _ in 0..config.trees {
            let (sample, _) = all.partial_shuffle(&mut rng, psi);
            let mut rows = sample.to_vec();
            let mut nodes = Vec::new();
            grow(x, &mut rows, 0, max_depth, &mut rng, &mut nodes);
            trees.push(nodes);
        }
        Ok(Self { trees, features: x.cols(), normaliser: average_path_length(psi) })
    }

    /// Anomaly score in (0, 1] of each row of `x`.
    pub fn scores(&self, x: &Matrix) -> Result<Vec<f64>> {
        x.check_finite("x")?;
        input::same_len("features", self.features, x.cols())?;
        // Tree by tree rather than point by point: one small tree stays in cache while every row descends
        // it. Each point's path lengths are still summed in tree order, so the scores equal `score_row`'s.
        let mut total = vec![0.0; x.rows()];
        for tree in &self.trees {
            for (i, t) in total.iter_mut().enumerate() {
                *t += path_length(tree, x.row(i));
            }
        }
        let trees = self.trees.len() as f64;
        Ok(total.iter().map(|t| self.score_of_mean(t / trees)).collect())
    }

    /// Anomaly score of one observation.
    pub fn score_row(&self, point: &[f64]) -> Result<f64> {
        input::finite("point", point)?;
        input::same_len("features", self.features, point.len())?;
        Ok(self.score_point(point))
    }

    fn score_point(&self, point: &[f64]) -> f64 {
        let total: f64 = self.trees.iter().map(|t| path_length(t, point)).sum();
        self.score_of_mean(total / self.trees.len() as f64)
    }

    fn score_of_mean(&self, mean_path_length: f64) -> f64 {
        2f64.powf(-mean_path_length / self.normaliser)
    }
}

fn path_length(tree: &[Node], point: &[f64]) -> f64 {
    let mut node = 0;
    loop {
        match tree[node] {
            Node::Leaf { path_length } => return path_length,
            Node::Split { feature, threshold, left, right } => {
                node = if point[feature] <= threshold { left } else { right };
            }
        }
    }
}

/// Grows the subtree for `rows` and returns its node index; nodes are pushed depth first.
fn grow(
    x: &Matrix,
    rows: &mut [usize],
    depth: usize,
    max_depth: usize,
    rng: &mut ChaCha8Rng,
    nodes: &mut Vec<Node>,
) -> usize {
    let id = nodes.len();
    nodes.push(Node::Leaf { path_length: depth as f64 + average_path_length(rows.len()) });
    if depth >= max_depth || rows.len() <= 1 {
        return id;
    }
    // Try features in random order until one is not constant on this node (scikit-learn's splitter does the
    // same); a node where every feature is constant stays a leaf.
    let mut features: Vec<usize> = (0..x.cols()).collect();
    features.shuffle(rng);
    for feature in features {
        let (lo, hi) = rows.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &r| {
            let v = x[(r, feature)];
            (lo.min(v), hi.max(v))
        });
        if !(hi > lo) {
            continue;
        }
        let mut threshold = uniform_between(rng, lo, hi);
        if threshold >= hi {
            threshold = lo;
        }
        let mut split = 0;
        for k in 0..rows.len() {
            if x[(rows[k], feature)] <= threshold {
                rows.swap(k, split);
                split += 1;
            }
        }
        let (l, r) = rows.split_at_mut(split);
        let left = grow(x, l, depth + 1, max_depth, rng, nodes);
        let right = grow(x, r, depth + 1, max_depth, rng, nodes);
        nodes[id] = Node::Split { feature, threshold, left, right };
        return id;
    }
    id
}

/// A uniform draw in [lo, hi). `hi − lo` overflows to infinity for finite features spread wider than
/// `f64::MAX` (e.g. ±9e307), where `gen_range` panics; there the draw is the convex combination
/// `lo·(1 − u) + hi·u`, which cannot overflow. Narrower ranges keep `gen_range`, so seeded forests are
/// unchanged.
fn uniform_between(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    if (hi - lo).is_finite() {
        rng.gen_range(lo..hi)
    } else {
        let u: f64 = rng.r#gen();
        lo * (1.0 - u) + hi * u
    }
}

impl IsolationForest {
    /// Indices of the `k` highest-scoring rows, most anomalous first.
    pub fn top_k(scores: &[f64], k: usize) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..scores.len()).collect();
        idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        idx.truncate(k);
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_spread_wider_than_f64_max_are_split_and_scored() {
        let rows: Vec<Vec<f64>> = (0..40).map(|i| vec![if i % 2 == 0 { 9e307 } else { -9e307 }, i as f64]).collect();
        let x = Matrix::from_rows(&rows).unwrap();
        let forest = IsolationForest::fit(&x, IsolationForestConfig { trees: 20, max_samples: 32, seed: 3 }).unwrap();
        let scores = forest.scores(&x).unwrap();
        assert!(scores.iter().all(|s| s.is_finite() && *s > 0.0 && *s <= 1.0), "{scores:?}");
    }
}
