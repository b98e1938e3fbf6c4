//! The caller of a tool call dispatched in process (`areas::agents::dispatch`): the principal (and signed
//! client) its protocol endpoint already authenticated. The auth layer takes them from this request
//! extension instead of a credential; a client can never set an extension, only code in this process can.

use fiscus_domain::tenancy::Principal;
use std::sync::Arc;

use crate::signed::SignedClient;

#[derive(Clone, Debug)]
pub struct Dispatched {
    pub principal: Arc<Principal>,
    pub signed: Option<Arc<SignedClient>>,
}
