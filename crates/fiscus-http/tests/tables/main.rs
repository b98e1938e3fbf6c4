//! The HTTP layer's own table against a fresh database (SQLite by default, PostgreSQL when
//! `FISCUS_TEST_DATABASE_URL` is set): signed agent requests, sealed, read back, and invisible to another
//! workspace.

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod agent_requests;
