//! The quant and model operations over HTTP: compute jobs and the engine's models (`quant`), machine
//! learning (`ml`), planning forecasts (`planning`), generative scenarios (`generative`) and LQM Builder with
//! its QLMs (`lqm`). Routes parse and render; `compute` and `lqm` at the crate root are what they call.

pub mod generative;
pub mod lqm;
pub mod ml;
pub mod planning;
pub mod quant;
