//! The agents' own tables against a fresh database (SQLite by default, PostgreSQL when `FISCUS_TEST_DATABASE_URL`
//! is set): A2A tasks, voice calls with their recordings, consents and transcripts, and the workflow gateway's
//! grants and tasks. Each module also holds that another workspace's and the other environment's rows are
//! invisible. They build and run without any other area's tests (`cargo nextest run -p fiscus-agents`).

// The fresh database and the builders, shared with the store's own tests.
use fiscus_testkit as helpers;

mod a2a_tasks;
mod calls;
mod hand_back;
mod spaces;
mod workflow_gateway;
mod workflows;
