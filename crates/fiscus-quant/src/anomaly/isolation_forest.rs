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

use crate::error::{QuantError, Result};
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

/// A node while a tree grows (depth first, as scikit-learn's builder).
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

/// A fitted tree as a complete binary tree of `depth` levels in heap order (the children of split `i` are
/// `2i + 1` and `2i + 2`; the `2^depth` leaves follow the `2^depth − 1` splits), so that a descent is
/// `depth` identical rounds without a branch: `i ← 2i + 1 + (x[feature] > threshold)` (scikit-learn's
/// `x ≤ threshold` goes left). A leaf the builder left above the full depth is carried down by splits with
/// an infinite threshold, which always go left; the leaf slots below their right branches are never
/// reached.
#[derive(Debug, Clone, PartialEq)]
struct Tree {
    depth: usize,
    /// Each split's threshold: `2^max(depth, 8)` entries (those past the `2^depth − 1` splits unused), so that
    /// an index can be masked into range, which lets the compiler drop the bounds checks, and so that every
    /// tree of depth 8 or less (all trees of at most 256 rows) has the same fixed size.
    thresholds: Vec<f64>,
    /// Each split's feature times [`LANES`]: its slot in a block of transposed rows (see `scores`).
    slots: Vec<u32>,
    /// Each leaf's path length, `depth + c(size)`; `2^depth` entries.
    leaves: Vec<f64>,
}

/// Splits stored by a tree of depth 8 or less.
const FIXED: usize = 256;

impl Tree {
    /// Lays out a grown tree (node 0 is its root) in heap order.
    fn from_nodes(nodes: &[Node]) -> Self {
        fn depth_of(nodes: &[Node], id: usize) -> usize {
            match nodes[id] {
                Node::Split { left, right, .. } => 1 + depth_of(nodes, left).max(depth_of(nodes, right)),
                Node::Leaf { .. } => 0,
            }
        }
        fn place(nodes: &[Node], id: usize, slot: usize, tree: &mut Tree) {
            let inner = tree.leaves.len() - 1;
            if slot >= inner {
                if let Node::Leaf { path_length } = nodes[id] {
                    tree.leaves[slot - inner] = path_length;
                }
                return;
            }
            match nodes[id] {
                Node::Split { feature, threshold, left, right } => {
                    tree.thresholds[slot] = threshold;
                    tree.slots[slot] = (feature * LANES) as u32;
                    place(nodes, left, 2 * slot + 1, tree);
                    place(nodes, right, 2 * slot + 2, tree);
                }
                Node::Leaf { .. } => place(nodes, id, 2 * slot + 1, tree),
            }
        }
        let depth = depth_of(nodes, 0);
        let size = (1 << depth).max(FIXED);
        let mut tree =
            Tree { depth, thresholds: vec![f64::INFINITY; size], slots: vec![0; size], leaves: vec![0.0; 1 << depth] };
        place(nodes, 0, 0, &mut tree);
        tree
    }

    /// The leaf reached after `depth` rounds from the root, as an index into `leaves`.
    fn leaf(&self, node: usize) -> f64 {
        self.leaves[node - (self.leaves.len() - 1)]
    }

    /// The path length of one point.
    fn path_length(&self, point: &[f64]) -> f64 {
        let mask = self.thresholds.len() - 1;
        let mut node = 0;
        for _ in 0..self.depth {
            let i = node & mask;
            let x = point[self.slots[i] as usize / LANES];
            node = 2 * node + 1 + usize::from(x > self.thresholds[i]);
        }
        self.leaf(node)
    }

    /// Adds the path lengths of [`LANES`] rows to `total`. `block[feature · LANES + k]` is the feature of row
    /// `k`; `block.len()` is a power of two. The rows descend together: their loads and compares are
    /// independent of one another, so they overlap instead of each waiting for the last. Every index is
    /// masked into range, which lets the compiler drop the bounds checks.
    fn add_path_lengths(&self, block: &[f64], total: &mut [f64]) {
        let (mask, block_mask) = (self.thresholds.len() - 1, block.len() - 1);
        let (thresholds, slots, block) = (&self.thresholds[..=mask], &self.slots[..=mask], &block[..=block_mask]);
        let mut node = [0usize; LANES];
        for _ in 0..self.depth {
            for (k, nk) in node.iter_mut().enumerate() {
                let i = *nk & mask;
                let x = block[(slots[i] as usize + k) & block_mask];
                *nk = 2 * *nk + 1 + usize::from(x > thresholds[i]);
            }
        }
        for (t, nk) in total.iter_mut().zip(node) {
            *t += self.leaf(nk);
        }
    }

    /// [`Tree::add_path_lengths`] for a tree of depth 8 or less and a block of `B` values: with every size
    /// known to the compiler the masks are constants, which leaves registers for the eight descents.
    fn add_path_lengths_fixed<const B: usize>(
        &self,
        thresholds: &[f64; FIXED],
        slots: &[u32; FIXED],
        block: &[f64; B],
        total: &mut [f64],
    ) {
        let mut node = [0usize; LANES];
        for _ in 0..self.depth {
            for (k, nk) in node.iter_mut().enumerate() {
                let i = *nk & (FIXED - 1);
                let x = block[(slots[i] as usize + k) & (B - 1)];
                *nk = 2 * *nk + 1 + usize::from(x > thresholds[i]);
            }
        }
        for (t, nk) in total.iter_mut().zip(node) {
            *t += self.leaf(nk);
        }
    }

    /// Adds this tree's path lengths of every block of `B` values (`LANES` rows each) to `total`.
    fn add_block_path_lengths<const B: usize>(&self, blocks: &[f64], total: &mut [f64]) {
        let fixed = <&[f64; FIXED]>::try_from(self.thresholds.as_slice())
            .ok()
            .zip(<&[u32; FIXED]>::try_from(self.slots.as_slice()).ok());
        for (block, t) in blocks.chunks_exact(B).zip(total.chunks_exact_mut(LANES)) {
            match (fixed, <&[f64; B]>::try_from(block)) {
                (Some((thresholds, slots)), Ok(block)) => self.add_path_lengths_fixed(thresholds, slots, block, t),
                _ => self.add_path_lengths(block, t),
            }
        }
    }
}

/// Rows that descend a tree together.
const LANES: usize = 8;

/// A fitted forest.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationForest {
    trees: Vec<Tree>,
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
        if x.cols() > 1 << 24 {
            // Feature slots (feature × LANES) are stored in 32 bits.
            return Err(QuantError::InvalidParameter { name: "x", reason: "at most 2^24 features".into() });
        }
        let mut trees = Vec::with_capacity(config.trees);
        grow_forest(x, psi, config, |nodes| trees.push(Tree::from_nodes(nodes)));
        Ok(Self { trees, features: x.cols(), normaliser: average_path_length(psi) })
    }

    /// Anomaly score in (0, 1] of each row of `x`.
    pub fn scores(&self, x: &Matrix) -> Result<Vec<f64>> {
        x.check_finite("x")?;
        input::same_len("features", self.features, x.cols())?;
        // Tree by tree, so that one small tree stays in cache while the rows descend it, `LANES` rows at a
        // time, transposed so that the rows' values of one feature are adjacent (features padded to a power
        // of two). Each point's path lengths are still summed in tree order, so the scores equal
        // `score_row`'s.
        let f = self.features;
        let width = f.next_power_of_two() * LANES;
        let full = x.rows() / LANES * LANES;
        let mut blocks = vec![0.0; full / LANES * width];
        for (g, block) in blocks.chunks_exact_mut(width).enumerate() {
            for k in 0..LANES {
                for (j, v) in x.row(g * LANES + k).iter().enumerate() {
                    block[j * LANES + k] = *v;
                }
            }
        }
        let mut total = vec![0.0; x.rows()];
        for tree in &self.trees {
            match width {
                8 => tree.add_block_path_lengths::<8>(&blocks, &mut total),
                16 => tree.add_block_path_lengths::<16>(&blocks, &mut total),
                32 => tree.add_block_path_lengths::<32>(&blocks, &mut total),
                64 => tree.add_block_path_lengths::<64>(&blocks, &mut total),
                128 => tree.add_block_path_lengths::<128>(&blocks, &mut total),
                _ => {
                    for (block, t) in blocks.chunks_exact(width).zip(total.chunks_exact_mut(LANES)) {
                        tree.add_path_lengths(block, t);
                    }
                }
            }
            for (i, t) in total.iter_mut().enumerate().skip(full) {
                *t += tree.path_length(x.row(i));
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
        let total: f64 = self.trees.iter().map(|t| t.path_length(point)).sum();
        self.score_of_mean(total / self.trees.len() as f64)
    }

    fn score_of_mean(&self, mean_path_length: f64) -> f64 {
        2f64.powf(-mean_path_length / self.normaliser)
    }
}

/// Grows the trees of a forest one after the other (sub-samples of `psi` rows drawn without replacement),
/// handing each to `tree` as nodes in the order the builder pushed them (node 0 is the root).
fn grow_forest(x: &Matrix, psi: usize, config: IsolationForestConfig, mut tree: impl FnMut(&[Node])) {
    let max_depth = (psi as f64).log2().ceil() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut all: Vec<usize> = (0..x.rows()).collect();
    let mut nodes = Vec::new();
    for _ in 0..config.trees {
        let (sample, _) = all.partial_shuffle(&mut rng, psi);
        let mut rows = sample.to_vec();
        nodes.clear();
        grow(x, &mut rows, 0, max_depth, &mut rng, &mut nodes);
        tree(&nodes);
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

    /// The path length of a point down the tree as the builder left it.
    fn walk(nodes: &[Node], point: &[f64]) -> f64 {
        let mut id = 0;
        loop {
            match nodes[id] {
                Node::Leaf { path_length } => return path_length,
                Node::Split { feature, threshold, left, right } => {
                    id = if point[feature] <= threshold { left } else { right };
                }
            }
        }
    }

    #[test]
    fn the_heap_layout_scores_exactly_as_the_grown_trees() {
        // Repeated values and few rows give trees of uneven depth, leaves above the full depth, and points
        // that land exactly on thresholds. 3 features are padded to 4 and 203 rows leave a partial block;
        // 20 features and trees deeper than 8 take the general descent instead of the fixed-size one.
        let mut state = 17_u64;
        for (n_rows, n_features, configs) in
            [(203, 3, vec![(7, 64, 4), (5, 203, 1), (3, 2, 9)]), (600, 20, vec![(4, 600, 2), (3, 100, 5)])]
        {
            let rows: Vec<Vec<f64>> = (0..n_rows)
                .map(|_| {
                    (0..n_features)
                        .map(|_| {
                            state =
                                state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                            ((state >> 40) % 9) as f64 - 4.0
                        })
                        .collect()
                })
                .collect();
            let x = Matrix::from_rows(&rows).unwrap();
            for (trees, max_samples, seed) in configs {
                let config = IsolationForestConfig { trees, max_samples, seed };
                let forest = IsolationForest::fit(&x, config).unwrap();
                let mut grown = Vec::new();
                grow_forest(&x, max_samples.min(n_rows), config, |nodes| grown.push(nodes.to_vec()));
                // Points exactly on thresholds too (they go left).
                let mut points = rows.clone();
                for (k, split) in grown.iter().flatten().enumerate() {
                    if let Node::Split { feature, threshold, .. } = *split {
                        let mut p = rows[k % rows.len()].clone();
                        p[feature] = threshold;
                        points.push(p);
                    }
                }
                let scores = forest.scores(&Matrix::from_rows(&points).unwrap()).unwrap();
                for (i, point) in points.iter().enumerate() {
                    let mut total = 0.0;
                    for (tree, nodes) in forest.trees.iter().zip(&grown) {
                        let want = walk(nodes, point);
                        assert_eq!(tree.path_length(point).to_bits(), want.to_bits());
                        total += want;
                    }
                    let want = forest.score_of_mean(total / trees as f64);
                    assert_eq!(scores[i].to_bits(), want.to_bits(), "row {i}");
                    assert_eq!(forest.score_row(point).unwrap().to_bits(), want.to_bits(), "row {i}");
                }
                if n_features == 20 && max_samples == 600 {
                    assert!(forest.trees.iter().any(|t| t.depth > 8), "a deep tree takes the general descent");
                }
            }
        }
    }
}
