//! Operations that span areas and so belong to the composition: the marketplace lists what every area
//! offers to install or run (workflow templates, model families, promoted LQMs, agent spaces), which no
//! single area crate may depend on.

pub mod marketplace;
