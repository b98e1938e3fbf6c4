//! Investment: the portfolio book (portfolios, tax lots, cash), which the data area imports, the store keeps
//! and the investment area reads. The rules that read it (collateral, model portfolios, pre-trade checks)
//! live with the investment area, in `fiscus-investment` (`rules/`).
//!
//! Units follow the engine's tax-lot module (`fiscus_quant::tax_lots`): quantities are integer micro-units
//! (one share = 1,000,000) and money is integer minor units of its currency, so a book sums exactly and a
//! lot relieved twice is refused, never drifted into.

pub mod book;
