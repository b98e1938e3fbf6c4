//! Tenancy: every object belongs to one workspace and one environment, and every request is bound to both.

use crate::credentials::Environment;
use crate::scopes::ScopeSet;

/// The partition a request may see. Every repository function takes one as its first argument, so a query
/// that is not scoped to a workspace and environment cannot be written by accident.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tenant {
    pub workspace_id: String,
    pub environment: Environment,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialKind {
    ApiKey,
    AccessToken,
    /// A signed execution client (RFC 9421): the credential id is the client's id.
    SignedClient,
}

impl CredentialKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialKind::ApiKey => "api_key",
            CredentialKind::AccessToken => "access_token",
            CredentialKind::SignedClient => "signed_client",
        }
    }

    pub fn parse(s: &str) -> Option<CredentialKind> {
        [CredentialKind::ApiKey, CredentialKind::AccessToken, CredentialKind::SignedClient]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// Who is calling on the machine plane: an application, through one credential, in one tenant, with a set
/// of scopes. It carries nothing else: no role, no approval authority (see governance.md, "two planes").
#[derive(Clone, Debug)]
pub struct Principal {
    pub tenant: Tenant,
    pub application_id: String,
    pub credential_id: String,
    pub credential_kind: CredentialKind,
    /// Effective scopes: the credential's (token scopes or the application's) ∩ the workspace's entitlement.
    pub scopes: ScopeSet,
    pub service_class: String,
}

impl Principal {
    pub fn workspace_id(&self) -> &str {
        &self.tenant.workspace_id
    }
}
