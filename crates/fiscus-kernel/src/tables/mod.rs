//! The kernel's own tables: what the kernel writes for every area (webhook endpoints and their deliveries,
//! fanned out from the outbox; the credits ledger every metered area debits; usage counts and tool
//! invocations, flushed by its logs). Their queries live here, beside the steps that use them; their schema
//! (migrations and the sealed-table shapes every verifier reads) stays with the store, which runs one migration
//! history for every area.

pub mod credits;
pub mod tool_invocations;
pub mod usage;
pub mod webhook_deliveries;
pub mod webhooks;
