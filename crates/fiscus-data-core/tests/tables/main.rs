//! The data plane's tables against a fresh database (SQLite by default, PostgreSQL when
//! `FISCUS_TEST_DATABASE_URL` is set): market data, finance-core entities and journals, and the portfolio
//! book. Each module also holds that another workspace's rows are invisible. They build and run without any
//! area's tests (`cargo nextest run -p fiscus-data-core`).

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod book;
mod finance_core;
mod market;
