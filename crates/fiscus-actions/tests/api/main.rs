//! Financial Actions through the real HTTP interface of a real server (`fiscus_apptest::spawn_app`: port 0,
//! a fresh database, SQLite by default, PostgreSQL when `FISCUS_TEST_DATABASE_URL` is set): proposals and
//! their gates, bank details, delegations, settlement, and paying through a bank's folders. They build and
//! run without any other area's tests (`cargo nextest run -p fiscus-actions`).

mod actions;
mod approval_policies;
mod bank_accounts;
mod bank_files;
mod batch_approval;
mod delegations;
mod drop_folder;
mod settlement;
