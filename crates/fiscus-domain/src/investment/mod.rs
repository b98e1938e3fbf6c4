//! Investment: the portfolio book (portfolios, tax lots, cash) and the rules that read it.
//!
//! Units follow the engine's tax-lot module (`fiscus_quant::tax_lots`): quantities are integer micro-units
//! (one share = 1,000,000) and money is integer minor units of its currency, so a book sums exactly and a
//! lot relieved twice is refused, never drifted into.

pub mod book;
pub mod collateral;
pub mod model_portfolio;
pub mod pre_trade;
