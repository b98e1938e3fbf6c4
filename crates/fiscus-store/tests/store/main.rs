//! The store's own tests: every repository function against a fresh database, SQLite by default and
//! PostgreSQL when `FISCUS_TEST_DATABASE_URL` is set. Each module covers one repository module, including
//! that another workspace's and the other environment's rows are invisible.

// The fresh database and the builders every repository test needs, shared with the areas' own table tests.
use fiscus_testkit as helpers;

mod appends;
mod applications;
mod audit;
mod cache;
mod connection;
mod credentials;
mod evidence_db;
mod execution_clients;
mod idempotency;
mod operators;
mod outbox;
mod seals;
mod workspaces;
