//! LQM Builder: the rules of governed quantitative models, in the manner of SR 11-7 model risk management.
//!
//! An LQM is a model identity with a declared task family, intended use and licence. It learns only from
//! data under an immutable contract, trains only when a person approved a retraining request, is evaluated
//! on data it did not see, and reaches the Quant Models catalogue only by an operator's promotion of one exact
//! evaluated checkpoint. This module decides which of those steps is open ([`lifecycle`]), which data a
//! model may learn from ([`licence`]) and how a retraining request is reviewed ([`retraining`]); the server
//! fits, stores and seals.

pub mod family;
pub mod licence;
pub mod lifecycle;
pub mod promotion;
pub mod records;
pub mod retraining;
