//! The OpenAPI 3.1 document. Handlers describe themselves with `#[utoipa::path]`; this module adds what the
//! operation catalogue knows (operation id, tag, required scope), and `contract` adds what every operation
//! shares (errors, headers, `Idempotency-Key`), so that those facts have one source.

use fiscus_domain::catalogue::{self, Group, Method};
use fiscus_domain::events::Event;
use fiscus_domain::scopes::SCOPES;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, ClientCredentials, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityRequirement,
    SecurityScheme,
};
use utoipa::openapi::tag::TagBuilder;
use utoipa::{OpenApi as _, PartialSchema, ToSchema};

use fiscus_http::problem::{FieldError, Problem};

#[derive(utoipa::OpenApi)]
#[openapi(info(
    title = "Fiscus — Enterprise Finance API",
    version = "2.0.0",
    contact(name = "The operators of this Fiscus deployment"),
    description = "A governed finance platform. Credentials carry scopes and nothing else; people keep every approval; every step is sealed evidence. Errors are RFC 9457 problem details; lists are `limit`/`after_id` pages; every POST accepts `Idempotency-Key`. Bodies are I-JSON (RFC 7493): a member name given twice is refused (400), and the character U+0000 is refused in every string, member name, form field, path and query (400/422). A query parameter an operation does not declare is refused (422). Every amount is an integer number of minor units up to 2^53 − 1."
))]
struct Base;

pub fn base() -> OpenApi {
    let mut api = Base::openapi();
    api.info.version = "2.0.0".into();
    api
}

pub mod columnar;
pub mod contract;
pub mod rules;

/// The document as served: the typed part finished with the catalogue's facts, then the common contract
/// (errors, headers, `Idempotency-Key`) applied to every operation.
pub fn document(api: OpenApi) -> serde_json::Value {
    let mut doc = serde_json::to_value(finish(api)).unwrap_or(serde_json::Value::Null);
    rules::apply(&mut doc);
    columnar::apply(&mut doc);
    contract::apply(&mut doc);
    contract::prune_unused_components(&mut doc);
    doc
}

/// Adds catalogue facts, security schemes and tags.
pub fn finish(mut api: OpenApi) -> OpenApi {
    let mut components = api.components.take().unwrap_or_default();
    components.schemas.insert(Problem::name().into_owned(), Problem::schema());
    components.schemas.insert(FieldError::name().into_owned(), FieldError::schema());
    // The one event envelope: what the outbox holds and webhooks will deliver (no operation returns it yet,
    // so it is added here with everything it refers to).
    let mut event_schemas = vec![(Event::name().into_owned(), Event::schema())];
    <Event as ToSchema>::schemas(&mut event_schemas);
    for (name, schema) in event_schemas {
        components.schemas.entry(name).or_insert(schema);
    }
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "An API key (`svc_test_…`, `svc_live_…`) or an OAuth access token (`fat_…`). Either holds \
                     scopes; the scope an operation needs is the one its `oauth2` requirement lists (also \
                     `x-fiscus-scope`).",
                ))
                .build(),
        ),
    );
    components.add_security_scheme(
        "oauth2",
        SecurityScheme::OAuth2(OAuth2::new([Flow::ClientCredentials(ClientCredentials::new(
            "/api/v2/oauth/token",
            Scopes::from_iter(SCOPES.iter().map(|s| (s.to_string(), format!("the `{s}` scope")))),
        ))])),
    );
    // OpenAPI has no scheme type for RFC 9421 message signatures; the nearest is a header the client sends,
    // described precisely (the full rules are in crates/fiscus-platform/README.md, "The agent gateway").
    components.add_security_scheme(
        "httpSignature",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "Signature-Input",
            "RFC 9421 HTTP Message Signature of a signed execution client (agent-execution operations only): \
             `Signature-Input: sig1=(\"@method\" \"@target-uri\" \"content-digest\");created=<unix \
             seconds>;keyid=\"<client id>\";nonce=\"<unique>\";alg=\"ed25519\"` and `Signature: sig1=:<base64>:`, \
             with an RFC 9530 `Content-Digest` when there is a body. `created` at most 300 s old; each nonce once.",
        ))),
    );
    api.components = Some(components);
    api.tags = Some(
        Group::ALL
            .iter()
            .map(|g| TagBuilder::new().name(g.name()).description(Some(g.description())).build())
            .collect(),
    );

    // A catch-all route (`{*path}`) is documented as the path parameter it is.
    let catch_alls: Vec<String> = api.paths.paths.keys().filter(|p| p.contains("{*")).cloned().collect();
    for path in catch_alls {
        if let Some(item) = api.paths.paths.remove(&path) {
            api.paths.paths.insert(catalogue::template(&path).into_owned(), item);
        }
    }
    for (path, item) in api.paths.paths.iter_mut() {
        for (method, op) in [
            (Method::Get, item.get.as_mut()),
            (Method::Post, item.post.as_mut()),
            (Method::Delete, item.delete.as_mut()),
        ] {
            let Some(op) = op else { continue };
            decorate(path, method, op);
        }
    }
    api
}

fn decorate(path: &str, method: Method, op: &mut Operation) {
    let Some(entry) = catalogue::find(method, path) else {
        // Left undecorated; the catalogue test fails on any documented path the catalogue lacks.
        return;
    };
    op.operation_id = Some(entry.id.to_string());
    op.tags = Some(vec![entry.group.name().to_string()]);
    let mut extensions = utoipa::openapi::extensions::Extensions::default();
    extensions.insert("x-fiscus-scope".into(), serde_json::json!(entry.scope));
    extensions.insert("x-fiscus-lifecycle".into(), serde_json::json!({ "stability": "Stable", "status": "Published" }));
    op.extensions = Some(extensions);
    match entry.scope {
        Some(scope) => {
            // The scope sits in the OAuth 2.0 requirement only: OpenAPI 3.1 lets any scheme list roles, but
            // generators and linters (Spectral's `oas3-operation-security-defined`) read a bearer scheme's list
            // as OAuth scopes it does not define. An API key carries the same scopes as a token would.
            let mut security = vec![
                SecurityRequirement::new("bearer", Vec::<String>::new()),
                SecurityRequirement::new("oauth2", [scope]),
            ];
            if entry.path.starts_with("/agent-execution/") {
                security.push(SecurityRequirement::new("httpSignature", Vec::<String>::new()));
            }
            op.security = Some(security);
        }
        None => op.security = Some(vec![SecurityRequirement::default()]),
    }
}
