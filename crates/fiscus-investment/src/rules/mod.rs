//! The investment area's rules, pure and with their unit tests: collateral eligibility and haircuts
//! (`collateral`), model portfolios and the orders that move a book towards one (`model_portfolio`), and the
//! pre-trade checks of an order (`pre_trade`). The book they read is `fiscus_data_core::book`.

pub mod collateral;
pub mod model_portfolio;
pub mod pre_trade;
