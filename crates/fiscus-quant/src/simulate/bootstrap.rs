//! Historical bootstrap paths: future returns are drawn from the observed ones. Rows are drawn whole, so the
//! cross-sectional dependence of a day is kept; with a block length above one, runs of consecutive days are
//! drawn (moving blocks, wrapping around the end), which also keeps short-range autocorrelation and
//! volatility clustering.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::Result;
use crate::input;
use crate::matrix::Matrix;

/// How many paths of how many steps, with which block length and seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootstrapSpec {
    pub steps: usize,
    pub paths: usize,
    /// 1 for the plain (iid) bootstrap.
    pub block_length: usize,
    pub seed: u64,
}

/// Returns `paths` matrices of `steps × assets` resampled returns.
pub fn bootstrap_paths(history: &Matrix, spec: BootstrapSpec) -> Result<Vec<Matrix>> {
    history.check_finite("history")?;
    input::at_least("history rows", 1, history.rows())?;
    input::at_least("steps", 1, spec.steps)?;
    input::at_least("block_length", 1, spec.block_length)?;
    let (t, n) = (history.rows(), history.cols());
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let mut out = Vec::with_capacity(spec.paths);
    for _ in 0..spec.paths {
        let mut m = Matrix::zeros(spec.steps, n);
        let mut k = 0;
        while k < spec.steps {
            let start = rng.gen_range(0..t);
            for b in 0..spec.block_length.min(spec.steps - k) {
                m.row_mut(k).copy_from_slice(history.row((start + b) % t));
                k += 1;
            }
        }
        out.push(m);
    }
    Ok(out)
}
