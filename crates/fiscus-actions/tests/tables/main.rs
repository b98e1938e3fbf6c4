//! The Financial Actions' own tables against a fresh database (SQLite by default, PostgreSQL when
//! `FISCUS_TEST_DATABASE_URL` is set): settlement items and records, counterparties and bank-account
//! versions, machine identities and delegations; each module also holds that another workspace's and the other environment's rows are invisible.
//! They build and run without any other area's tests (`cargo nextest run -p fiscus-actions`).

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod bank_accounts;
mod delegations;
mod settlement;
