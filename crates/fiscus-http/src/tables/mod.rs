//! The HTTP layer's own table: the signed agent requests it seals as evidence as they arrive
//! (`agent_evidence`). Its query lives here, beside its writer; its schema stays with the store.

pub mod agent_requests;
