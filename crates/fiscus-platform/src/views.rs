//! Core platform shapes: workspace, infrastructure reads, credits, audit head, OAuth.

use fiscus_domain::credentials::Environment;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct WorkspaceView {
    /// Always `workspace`.
    pub object: String,
    pub id: String,
    pub name: String,
    /// The environment of the calling credential; every object it sees belongs to it.
    pub environment: Environment,
    pub production_access: ProductionAccessView,
    /// Scopes the workspace may grant to its applications.
    pub entitlement: Vec<&'static str>,
    pub demo: bool,
    pub created_at: String,
    pub caller: CallerView,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProductionAccessView {
    /// Production access is off for a new workspace; only operators (the human plane) can turn it on.
    pub enabled: bool,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct CallerView {
    pub application_id: String,
    pub credential_id: String,
    /// `api_key` or `access_token`.
    pub credential_kind: String,
    /// The caller's effective scopes.
    pub scopes: Vec<&'static str>,
    pub service_class: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UsageRowView {
    pub application_id: String,
    pub credential_id: String,
    pub operation: String,
    /// UTC day, `YYYY-MM-DD`.
    pub day: String,
    pub requests: i64,
    /// Requests answered with a 4xx or 5xx status.
    pub errors: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UsageView {
    /// Always `usage`.
    pub object: String,
    pub environment: Environment,
    /// First UTC day counted.
    pub since: String,
    pub total_requests: i64,
    pub total_errors: i64,
    pub data: Vec<UsageRowView>,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RegionView {
    /// Always `region`.
    pub object: String,
    pub id: String,
    pub primary: bool,
    pub status: String,
    /// `sqlite` (one node, embedded file) or `postgres` (shared by all nodes).
    pub database_backend: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ServiceClassView {
    /// Always `service_class`.
    pub object: String,
    pub name: String,
    /// Requests allowed per application (all its credentials together) per window.
    pub quota: u64,
    pub window_seconds: u64,
    /// True for the class that applies to the calling credential.
    pub current: bool,
    /// How the limit is enforced.
    pub enforcement: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PostureView {
    /// Always `posture`.
    pub object: String,
    pub workspace_id: String,
    pub evaluated_at: String,
    pub production_access: ProductionAccessView,
    pub api_keys: KeyPostureView,
    pub oauth_clients_active: i64,
    pub secrets: SecretsPostureView,
    pub operators: OperatorPostureView,
    pub audit_chain: AuditHeadView,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct KeyPostureView {
    pub active: i64,
    pub active_sandbox: i64,
    pub active_production: i64,
    /// Age in days of the oldest active key; null when there is none.
    pub oldest_age_days: Option<f64>,
    pub average_age_days: Option<f64>,
    /// Active keys older than 90 days (a common rotation policy).
    pub older_than_90_days: i64,
    /// Active keys that never expire.
    pub without_expiry: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SecretsPostureView {
    /// How credential secrets are stored: `hmac-sha256` (keyed one-way hash; never recoverable).
    pub credential_storage: String,
    /// Where the server key comes from: `file` (provisioned) or `generated` (created by this node on its
    /// first run).
    pub server_key_source: String,
    /// Reversible secrets (webhook signing secrets) held by this workspace, and how they are encrypted.
    pub stored_reversible_secrets: i64,
    pub reversible_secret_encryption: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OperatorPostureView {
    pub operators: i64,
    pub with_second_factor: i64,
    /// with_second_factor / operators; null while the workspace has no operators.
    pub second_factor_coverage: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AuditHeadView {
    /// Always `audit_head`.
    pub object: String,
    pub workspace_id: String,
    /// Number of events in the workspace's chain.
    pub seq: i64,
    /// Hash of the last event (`sha256:…`), or the genesis hash when the chain is empty.
    pub hash: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DataEntitlementView {
    /// Always `data_entitlement`.
    pub object: String,
    pub scope: String,
    /// The data domain the scope opens.
    pub domain: String,
    pub workspace_entitled: bool,
    pub granted_to_caller: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CreditBalanceView {
    /// Always `ai_credit_balance`.
    pub object: String,
    pub environment: Environment,
    pub granted: i64,
    pub consumed: i64,
    /// granted − consumed, derived from the ledger.
    pub balance: i64,
    pub ledger_entries: i64,
}

/// The `POST /oauth/token` form (RFC 6749 §4.4.2). The endpoint reads the form itself, so that every refusal
/// is an RFC 6749 error; this type states the form for the document. Unknown parameters are ignored (§3.2).
#[derive(utoipa::ToSchema)]
pub struct TokenForm {
    #[schema(schema_with = grant_type_schema)]
    pub grant_type: String,
    /// Space-separated scopes to request; without it, everything the application is entitled to.
    #[schema(schema_with = scope_list_schema)]
    pub scope: Option<String>,
    /// Client authentication by form fields, instead of HTTP Basic (never both).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// The `POST /oauth/revoke` (RFC 7009) and `POST /oauth/introspect` (RFC 7662) form.
#[derive(utoipa::ToSchema)]
pub struct TokenReferenceForm {
    /// The access token.
    #[schema(min_length = 1)]
    pub token: String,
    /// `access_token` (the only kind Fiscus issues); other hints are ignored.
    pub token_type_hint: Option<String>,
    /// Client authentication by form fields, instead of HTTP Basic (never both).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// What derived schemas cannot state about the OAuth forms: every parameter is one string (a form has no
/// other values; a list would be a repeated parameter, which RFC 6749 §3.1 forbids), and unknown ones are
/// allowed and ignored.
pub fn oauth_form_conditions() -> serde_json::Value {
    // Extension parameters are text like every field: U+0000 is refused in names and values alike.
    serde_json::json!({ "additionalProperties": { "type": "string", "pattern": "^[^\\u0000]*$" } })
}

fn grant_type_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["client_credentials"]))
        .build()
}

/// One or more registered scopes, separated by spaces (commas are read as separators too). An empty value is
/// as if omitted (RFC 6749 §3.1), and so is null, which a form cannot carry.
fn scope_list_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{SchemaType, Type};
    let one = format!("({})", fiscus_domain::scopes::SCOPES.join("|"));
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(format!("^$|^[ ,]*{one}([ ,]+{one})*[ ,]*$")))
        .examples(["workspace:read trust:read"])
        .build()
}

/// RFC 6749 §5.1 access token response.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TokenResponse {
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    pub expires_in: u64,
    /// The granted scopes, space-separated.
    pub scope: String,
}

/// RFC 6749 §5.2 error response.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OAuthErrorResponse {
    pub error: String,
    pub error_description: Option<String>,
}

/// RFC 7662 §2.2 introspection response.
#[derive(Clone, Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct IntrospectionResponse {
    pub active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iat: Option<i64>,
    /// The application the token acts for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// Fiscus extensions: the token's workspace and environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}
