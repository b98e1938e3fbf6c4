//! The data plane below every area that reads it: what a dataset, its rows and the portfolio book are
//! (`rules`, `book`), and the queries of their tables (`tables`). The data area imports into it; the
//! kernel's computation inputs, investment, models and the agents read from it. It sits beside the data
//! area (as a `-core` crate) because those readers may not depend on an area crate.

pub mod book;
pub mod rules;
pub mod tables;
