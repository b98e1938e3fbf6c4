//! The Financial Actions' own tables against a fresh database (SQLite by default, PostgreSQL when
//! `FISCUS_TEST_DATABASE_URL` is set): actions with their check versions, decisions and history, settlement
//! items and records, counterparties and bank-account versions, machine identities and delegations, and the
//! autonomy assessment's evidence; each module also holds that another workspace's and the other
//! environment's rows are invisible. They build and run without any other area's tests (`cargo nextest run
//! -p fiscus-actions`).

// The fresh database and the builders (the store's, shared with its own tests, and an action's).
mod helpers;

mod actions;
mod autonomy_evidence;
mod bank_accounts;
mod delegations;
mod settlement;
