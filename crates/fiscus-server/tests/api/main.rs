//! Integration tests: the real HTTP interface of a real server on port 0 with its own fresh database.
//! SQLite by default; PostgreSQL when `FISCUS_TEST_DATABASE_URL` is set (a fresh database per test).

mod a2a;
mod actions;
mod audit;
mod auth;
mod browser;
mod compute;
mod connections;
mod console;
mod contract;
mod data;
mod delegations;
mod events;
mod evidence;
mod examples;
mod generative;
mod helpers;
mod idempotency;
mod investment;
mod layers;
mod mcp;
mod models;
mod oauth;
mod openapi;
mod planning;
mod platform;
mod probes;
mod python_clients;
mod rate_limit;
mod research;
mod schemathesis;
mod settlement;
mod signed_clients;
mod tournaments;
mod webhook_delivery;
mod webhooks;
