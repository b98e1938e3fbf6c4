//! The models' own tables against a fresh database (SQLite by default, PostgreSQL when `FISCUS_TEST_DATABASE_URL`
//! is set): compute jobs, LQMs (models, contracts, training, supply chain, QLMs) and research snapshots. Each
//! module also holds that another workspace's and the other environment's rows are invisible. They build and run
//! without any other area's tests (`cargo nextest run -p fiscus-models`).

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod compute;
mod lqm;
mod research;
