//! A thin builder over clarabel's standard form `min ½xᵀPx + qᵀx  s.t.  Ax + s = b, s ∈ K`.
//!
//! The portfolio formulations add rows one constraint at a time; this module keeps the three cone kinds the
//! crate uses (equalities, inequalities, second-order cones) in separate row lists and stacks them in the
//! order clarabel expects, maps the solver's status to [`QuantError`], and re-checks the returned point
//! against the linear constraints so that a reduced-accuracy answer is never passed off as a solution.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use crate::budget::Meter;
use crate::error::{QuantError, Result};

/// One sparse row `Σ coef·x[index]` with its right-hand side.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) terms: Vec<(usize, f64)>,
    pub(crate) rhs: f64,
}

impl Row {
    pub(crate) fn new(terms: Vec<(usize, f64)>, rhs: f64) -> Self {
        Self { terms, rhs }
    }
}

/// A conic program under construction.
#[derive(Debug, Clone)]
pub(crate) struct ConicProgram {
    n: usize,
    p: Vec<(usize, usize, f64)>,
    q: Vec<f64>,
    eq: Vec<Row>,
    le: Vec<Row>,
    soc: Vec<Vec<Row>>,
}

/// How far a returned point may violate a linear constraint before the answer is refused.
const FEASIBILITY_TOLERANCE: f64 = 1e-6;

/// clarabel's own default iteration limit; reaching it is non-convergence unless the caller's budget was
/// the tighter limit.
const SOLVER_MAX_ITERATIONS: usize = 200;

impl ConicProgram {
    /// A program in `n` variables with zero objective and no constraints.
    pub(crate) fn new(n: usize) -> Self {
        Self { n, p: Vec::new(), q: vec![0.0; n], eq: Vec::new(), le: Vec::new(), soc: Vec::new() }
    }

    /// Adds `coef` to P[i][j] and P[j][i] (only the upper triangle is stored).
    pub(crate) fn add_quadratic(&mut self, i: usize, j: usize, coef: f64) {
        let (r, c) = if i <= j { (i, j) } else { (j, i) };
        self.p.push((r, c, coef));
    }

    /// Adds `coef` to the linear objective of variable `i`.
    pub(crate) fn add_linear(&mut self, i: usize, coef: f64) {
        self.q[i] += coef;
    }

    /// `row = rhs`.
    pub(crate) fn equal(&mut self, row: Row) {
        self.eq.push(row);
    }

    /// `row ≤ rhs`.
    pub(crate) fn at_most(&mut self, row: Row) {
        self.le.push(row);
    }

    /// `‖(rhs_k - row_k)_{k≥1}‖ ≤ rhs_0 - row_0`, i.e. the slack vector `b - Ax` lies in a second-order cone.
    pub(crate) fn second_order_cone(&mut self, rows: Vec<Row>) {
        self.soc.push(rows);
    }

    /// Solves the program within what is left of `meter` and returns the primal point.
    pub(crate) fn solve(&self, meter: &Meter) -> Result<Vec<f64>> {
        meter.check_time()?;
        let p = triplets(self.n, self.n, self.p.iter().copied());
        let mut rows: Vec<&Row> = Vec::new();
        let mut cones = Vec::new();
        if !self.eq.is_empty() {
            rows.extend(self.eq.iter());
            cones.push(SupportedConeT::ZeroConeT(self.eq.len()));
        }
        if !self.le.is_empty() {
            rows.extend(self.le.iter());
            cones.push(SupportedConeT::NonnegativeConeT(self.le.len()));
        }
        for block in &self.soc {
            rows.extend(block.iter());
            cones.push(SupportedConeT::SecondOrderConeT(block.len()));
        }
        let a = triplets(
            rows.len(),
            self.n,
            rows.iter().enumerate().flat_map(|(r, row)| row.terms.iter().map(move |&(c, v)| (r, c, v))),
        );
        let b: Vec<f64> = rows.iter().map(|r| r.rhs).collect();
        let budget_binds = meter.iterations_left() < SOLVER_MAX_ITERATIONS;
        let settings = DefaultSettings {
            verbose: false,
            max_iter: u32::try_from(meter.iterations_left().min(SOLVER_MAX_ITERATIONS)).unwrap_or(0),
            time_limit: meter.remaining().as_secs_f64(),
            ..DefaultSettings::default()
        };
        let mut solver = DefaultSolver::new(&p, &self.q, &a, &b, &cones, settings)
            .map_err(|e| QuantError::NoConvergence { what: "conic solver", detail: e.to_string() })?;
        solver.solve();
        let status = solver.solution.status;
        match status {
            SolverStatus::Solved | SolverStatus::AlmostSolved => {}
            SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
                return Err(QuantError::Infeasible {
                    detail: "the solver found a certificate that no point satisfies every constraint".into(),
                });
            }
            SolverStatus::DualInfeasible | SolverStatus::AlmostDualInfeasible => {
                return Err(QuantError::Unbounded {
                    detail: "the objective can be improved without limit under these constraints".into(),
                });
            }
            SolverStatus::MaxTime => return Err(meter.out_of_time()),
            SolverStatus::MaxIterations if budget_binds => return Err(meter.out_of_iterations()),
            other => {
                return Err(QuantError::NoConvergence {
                    what: "conic solver",
                    detail: format!("stopped with status {other:?}"),
                });
            }
        }
        let x = solver.solution.x.clone();
        self.check_feasible(&x)?;
        Ok(x)
    }

    fn check_feasible(&self, x: &[f64]) -> Result<()> {
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(QuantError::NoConvergence {
                what: "conic solver",
                detail: format!("returned a non-finite value at variable {i}"),
            });
        }
        let value = |row: &Row| row.terms.iter().map(|&(c, v)| v * x[c]).sum::<f64>();
        let scale = |row: &Row| 1.0 + row.rhs.abs();
        for row in &self.eq {
            if (value(row) - row.rhs).abs() > FEASIBILITY_TOLERANCE * scale(row) {
                return Err(not_feasible());
            }
        }
        for row in &self.le {
            if value(row) - row.rhs > FEASIBILITY_TOLERANCE * scale(row) {
                return Err(not_feasible());
            }
        }
        Ok(())
    }
}

fn not_feasible() -> QuantError {
    QuantError::NoConvergence {
        what: "conic solver",
        detail: "the returned point violates a constraint by more than 1e-6".into(),
    }
}

fn triplets(m: usize, n: usize, entries: impl Iterator<Item = (usize, usize, f64)>) -> CscMatrix<f64> {
    let (mut i, mut j, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for (r, c, x) in entries {
        i.push(r);
        j.push(c);
        v.push(x);
    }
    CscMatrix::new_from_triplets(m, n, i, j, v)
}
