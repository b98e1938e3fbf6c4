//! The kernel's own tables against a fresh database (SQLite by default, PostgreSQL when
//! `FISCUS_TEST_DATABASE_URL` is set): credits, tool invocations, usage, webhook endpoints and deliveries. Each
//! module also holds that another workspace's and the other environment's rows are invisible. They build and
//! run without any area's tests (`cargo nextest run -p fiscus-kernel`).

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod credits;
mod tool_invocations;
mod usage;
mod webhook_deliveries;
