//! The investment area's own tables against a fresh database (SQLite by default, PostgreSQL when
//! `FISCUS_TEST_DATABASE_URL` is set): investment records, theme universes, model portfolios and their
//! operations, and collateral. Each module also holds that another workspace's and the other environment's rows
//! are invisible. They build and run without any other area's tests (`cargo nextest run -p fiscus-investment`).

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod records;
mod themes;
