//! The agents' own tables: A2A tasks, voice calls with their recordings, consents and transcripts, and the
//! workflow gateway's grants and tasks. Their queries live here, beside the steps that use them; their schema
//! (migrations and the sealed-table shapes every verifier reads) stays with the store, which runs one migration
//! history for every area.

pub mod a2a_tasks;
pub mod calls;
pub mod spaces;
pub mod workflow_gateway;
pub mod workflows;
