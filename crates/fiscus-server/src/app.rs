//! Assembles the router: catalogued operations behind authentication, the public endpoints beside them, and
//! the cross-cutting layers around everything.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Extension, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use fiscus_agents::dispatch::{Dispatch, Dispatcher};
use fiscus_domain::error_code::ErrorCode;
use fiscus_http::document::ApiDocument;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tower::ServiceExt as _;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;

use crate::areas;
use crate::openapi;
use fiscus_http::AppState;
use fiscus_http::problem::ApiError;
use fiscus_http::{admission, agent_evidence, auth, body_limit, edge, idempotency, metrics, request_id};

/// Every area's bearer-authenticated operations, once: those that only read, and those that write or serve
/// a gateway (which also go behind idempotency and request evidence).
fn operations() -> (OpenApiRouter<AppState>, OpenApiRouter<AppState>) {
    let reads = OpenApiRouter::new()
        .merge(fiscus_platform::reads())
        .merge(fiscus_data::reads())
        .merge(fiscus_models::reads())
        .merge(fiscus_investment::reads())
        .merge(fiscus_agents::reads())
        .merge(areas::marketplace::routes());
    let writes = OpenApiRouter::new()
        .merge(fiscus_data::writes())
        .merge(fiscus_models::writes())
        .merge(fiscus_investment::writes())
        .merge(fiscus_agents::writes())
        .merge(fiscus_platform::writes())
        .merge(fiscus_actions::routes());
    (reads, writes)
}

/// The OpenAPI document alone (no database needed), for `fiscus catalogue check` and tests.
pub fn openapi_document() -> serde_json::Value {
    let (reads, writes) = operations();
    let (_, api) = OpenApiRouter::<AppState>::with_openapi(openapi::base())
        .merge(reads.merge(writes))
        .merge(fiscus_platform::oauth::routes())
        .split_for_parts();
    openapi::document(api)
}

/// Every documented operation: the bearer ones and the client-authenticated OAuth endpoints.
pub fn documented(state: &AppState) -> (Router<AppState>, serde_json::Value) {
    // Idempotency and gateway request evidence only have work on the operations that write or serve the
    // agent gateway; reads skip both layers (measurably cheaper reads). A test posts every documented POST
    // twice with one Idempotency-Key, so a POST added without the layer is caught.
    let (reads, writes) = operations();
    let writes = writes
        .route_layer(from_fn_with_state(state.clone(), idempotency::layer))
        .route_layer(from_fn_with_state(state.clone(), agent_evidence::layer))
        .route_layer(from_fn_with_state(state.clone(), admission::layer));
    let bearer = reads.merge(writes).route_layer(from_fn_with_state(state.clone(), auth::layer));
    let (router, api) = OpenApiRouter::with_openapi(openapi::base())
        .merge(bearer)
        .merge(fiscus_platform::oauth::routes())
        .split_for_parts();
    (router, openapi::document(api))
}

/// Tool calls (MCP, A2A, Agent Space runs) dispatched in process to the operations' own routes: the API
/// with its route layers (metrics names the operation; authentication, idempotency and request evidence
/// apply) and the request rules every request meets (body limit, the edge's refusals), below the outer
/// layers the protocol request already passed (request id, panic guard).
struct RouterDispatch {
    routes: Router,
    document: Arc<ApiDocument>,
}

impl Dispatch for RouterDispatch {
    fn call(&self, request: Request) -> Pin<Box<dyn Future<Output = Response> + Send>> {
        let routes = self.routes.clone();
        Box::pin(async move {
            let Ok(response) = routes.oneshot(request).await;
            response
        })
    }

    fn document(&self) -> &ApiDocument {
        &self.document
    }
}

/// The whole service.
pub fn build(state: AppState) -> Router {
    assemble(state).0
}

/// The dispatcher the agent worker is handed (the node's own is built with its router by [`assemble`]).
pub fn dispatcher(state: &AppState) -> Dispatcher {
    assemble(state.clone()).1
}

/// The whole service, and the dispatcher its tool calls go through: handed to the protocol handlers as a
/// request extension and to the agent worker by the composition, so no area looks a router up at run time.
pub fn assemble(state: AppState) -> (Router, Dispatcher) {
    let (api, doc) = documented(&state);
    let document = Arc::new(ApiDocument::new(doc.clone()));
    let _ = state.http.api.set(document.clone());
    let routes = api
        .clone()
        .route_layer(from_fn_with_state(state.clone(), metrics::layer))
        .layer(DefaultBodyLimit::max(state.settings.body_limit_bytes))
        .layer(from_fn(edge::layer))
        .with_state(state.clone());
    let dispatcher = Dispatcher(Arc::new(RouterDispatch { routes, document }));
    let doc_json = Arc::new(serde_json::to_string(&doc).unwrap_or_else(|_| String::from("{}")));
    let docs_page = Arc::new(fiscus_http::docs::render(&doc));
    let router = Router::new()
        .merge(api)
        .merge(fiscus_console::routes(
            Router::new()
                .merge(fiscus_investment::console::routes())
                .merge(fiscus_models::console::routes())
                .merge(fiscus_agents::console::routes()),
        ))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .route(
            "/api/v2/openapi.json",
            get(move || {
                let doc_json = doc_json.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], doc_json.as_str().to_owned()) }
            }),
        )
        .route(
            "/docs",
            get(move || {
                let page = docs_page.clone();
                async move { Html(page.as_str().to_owned()) }
            }),
        )
        .route("/problems/{code}", get(fiscus_http::docs::problem_page))
        .route("/.well-known/oauth-authorization-server", get(fiscus_platform::oauth::authorization_server_metadata))
        .route("/.well-known/fiscus-evidence-key", get(fiscus_platform::evidence::well_known_key))
        .route(fiscus_http::issuer::MCP_RESOURCE_METADATA, get(fiscus_platform::oauth::mcp_resource_metadata))
        .route(fiscus_agents::routes::agents::a2a::CARD_PATH, get(fiscus_agents::routes::agents::a2a::public_card))
        .route(
            fiscus_agents::routes::agents::a2a::GATEWAY_CARD_PATH,
            get(fiscus_agents::routes::agents::a2a::public_card),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(from_fn_with_state(state.clone(), metrics::layer))
        .layer(DefaultBodyLimit::max(state.settings.body_limit_bytes))
        .layer(from_fn_with_state(state.clone(), body_limit::layer))
        .layer(from_fn(edge::layer))
        .layer(CatchPanicLayer::custom(|_| ApiError::internal().into_response()))
        .layer(from_fn(request_id::layer))
        .layer(from_fn(security_headers))
        .layer(Extension(dispatcher.clone()))
        .with_state(state.clone());
    (router, dispatcher)
}

async fn healthz() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], r#"{"status":"ok"}"#)
}

async fn readyz(State(state): State<AppState>) -> Response {
    if state.draining.load(std::sync::atomic::Ordering::Acquire) {
        return ApiError::new(ErrorCode::Unavailable)
            .detail("this node is stopping: it still answers, and stops accepting connections shortly")
            .into_response();
    }
    match state.store.ping().await {
        // Ready with or without the credential cache (without it every lookup reads the database); which of
        // the two is said, so an operator (and a test of several nodes) can tell.
        Ok(()) => {
            let body = if state.store.cache_usable() {
                r#"{"status":"ready","credential_cache":"in_use"}"#
            } else {
                r#"{"status":"ready","credential_cache":"not_in_use"}"#
            };
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            ApiError::new(ErrorCode::Unavailable).detail("the database does not answer").into_response()
        }
    }
}

/// OpenMetrics 1.0 or the Prometheus text format 0.0.4, by `Accept` (`http::metrics::Format`).
async fn metrics_text(State(state): State<AppState>, headers: axum::http::HeaderMap) -> impl IntoResponse {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = fiscus_http::metrics::Format::negotiate(accept);
    // Records set aside are counted in the database (any node may have set them aside); a database that
    // does not answer leaves the last count rather than failing the scrape.
    if let Ok(mut conn) = state.store.read().await
        && let Ok(counts) = fiscus_store::set_aside::counts(&mut conn).await
    {
        state.http.metrics.records_set_aside(&counts);
    }
    ([(header::CONTENT_TYPE, format.content_type()), (header::VARY, "Accept")], state.http.metrics.encode_as(format))
}

async fn not_found() -> ApiError {
    ApiError::not_found().detail("no such path")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(ErrorCode::MethodNotAllowed)
}

/// Conservative defaults for an API that also serves a few HTML pages.
async fn security_headers(req: Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Pages may choose their own policy (the console needs `same-origin`, or browsers would send
    // `Origin: null` with its forms and the same-origin check would refuse them).
    if !headers.contains_key(header::REFERRER_POLICY) {
        headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    }
    if response.status() == StatusCode::UNAUTHORIZED || response.status() == StatusCode::FORBIDDEN {
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
