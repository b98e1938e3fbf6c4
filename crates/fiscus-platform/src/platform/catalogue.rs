//! The change ledger over HTTP: the operation catalogue with each operation's scope, group, origin and
//! lifecycle and the catalogue's counts (the same report `fiscus catalogue check` prints), and the ledger of
//! lifecycle changes with deprecation and sunset evidence (see `fiscus_kernel::change_ledger`).

use axum::Json;
use axum::extract::State;
use fiscus_domain::catalogue::{OPERATIONS, Source};
use fiscus_kernel::change_ledger::{self, CATALOGUE_VERSION, Deprecation, Entry, Status};
use serde::Serialize;

use fiscus_http::AppState;
use fiscus_http::ctx::Ctx;
use fiscus_http::problem::ApiError;

/// The catalogue's counts.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CatalogueCounts {
    pub operations: usize,
    /// From the seed's catalogue.
    pub seed_operations: usize,
    /// Added by Fiscus where the seed leaves a gap.
    pub added_operations: usize,
    pub paths: usize,
    /// Scopes registered.
    pub scopes: usize,
    /// Scopes some operation requires.
    pub scopes_used: usize,
    /// Operations this build serves (documented in its OpenAPI document).
    pub served: usize,
    /// Operations with a deprecation in the ledger.
    pub deprecated: usize,
    /// Disagreements between the catalogue, the scope registry and the served document (always 0 in a
    /// healthy build; each is listed in `scope_mismatches`).
    pub mismatches: usize,
}

/// One catalogued operation and its lifecycle.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CatalogueOperationView {
    #[schema(example = "get_workspace")]
    pub operation_id: String,
    #[schema(example = "GET")]
    pub method: String,
    #[schema(example = "/api/v2/workspace")]
    pub path: String,
    /// The scope a bearer credential needs (`null` for the OAuth endpoints, which authenticate the client).
    #[schema(example = "workspace:read")]
    pub scope: Option<String>,
    /// The operation group (the OpenAPI tag).
    #[schema(example = "Core Platform")]
    pub group: String,
    /// `seed` or `added`.
    #[schema(example = "seed")]
    pub source: String,
    /// Always `stable`.
    #[schema(example = "stable")]
    pub stability: String,
    pub status: Status,
    /// The ledger's deprecation of it, if any.
    pub deprecation: Option<Deprecation>,
    /// Whether this build serves it.
    pub served: bool,
}

/// The operation catalogue.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CatalogueView {
    /// Always `catalogue`.
    pub object: String,
    #[schema(example = "2.0.0")]
    pub catalogue_version: String,
    pub counts: CatalogueCounts,
    /// What disagrees, if anything.
    pub scope_mismatches: Vec<String>,
    pub data: Vec<CatalogueOperationView>,
}

/// The ledger of lifecycle changes.
#[derive(Serialize, utoipa::ToSchema)]
pub struct LedgerView {
    /// Always `change_ledger`.
    pub object: String,
    #[schema(example = "2.0.0")]
    pub catalogue_version: String,
    /// Oldest first.
    pub data: Vec<Entry>,
}

/// The operation catalogue: every operation with its scope, group, origin and lifecycle, and the counts.
///
/// The same report `fiscus catalogue check` prints: the catalogue (the seed's operations and those Fiscus
/// adds), checked against the scope registry and against the OpenAPI document this build serves. Lifecycle
/// comes from the change ledger (`GET /api/v2/catalogue/ledger`): every operation is Stable; one the ledger
/// deprecates is `deprecated`, and its responses carry `Deprecation` (RFC 9745) and `Sunset` (RFC 8594)
/// headers. Needs `infrastructure:read` (platform metadata, like regions and service classes); reading it
/// grants nothing, and a lifecycle change never changes scopes or authority.
#[utoipa::path(
    get,
    path = "/api/v2/catalogue",
    responses((status = 200, description = "The catalogue with its counts", body = CatalogueView))
)]
pub async fn get_catalogue(State(state): State<AppState>, ctx: Ctx) -> Result<Json<CatalogueView>, ApiError> {
    let report = crate::catalogue_check::check(ctx.api.json());
    let deprecations = &state.settings.deprecations;
    let data: Vec<CatalogueOperationView> = OPERATIONS
        .iter()
        .map(|op| {
            let deprecation = deprecations.iter().find(|d| d.operation_id == op.id).cloned();
            CatalogueOperationView {
                operation_id: op.id.into(),
                method: op.method.as_str().into(),
                path: op.full_path(),
                scope: op.scope.map(str::to_string),
                group: op.group.name().into(),
                source: if op.source == Source::Seed { "seed" } else { "added" }.into(),
                stability: "stable".into(),
                status: if deprecation.is_some() { Status::Deprecated } else { Status::Published },
                deprecation,
                served: report.served.contains(&op.id),
            }
        })
        .collect();
    let deprecated = data.iter().filter(|op| op.status == Status::Deprecated).count();
    Ok(Json(CatalogueView {
        object: "catalogue".into(),
        catalogue_version: CATALOGUE_VERSION.into(),
        counts: CatalogueCounts {
            operations: report.operations,
            seed_operations: report.seed_operations,
            added_operations: report.added_operations,
            paths: report.paths,
            scopes: report.scopes,
            scopes_used: report.scopes_used,
            served: report.served.len(),
            deprecated,
            mismatches: report.mismatches.len(),
        },
        scope_mismatches: report.mismatches.clone(),
        data,
    }))
}

/// The change ledger: the recorded lifecycle changes of the catalogue, with deprecation and sunset evidence.
///
/// Entries, oldest first: the publication of catalogue 2.0.0 (the seed's operations, Stable and Published),
/// the operations Fiscus adds (published with this build), and each deprecation this deployment announces
/// (its dates, successor and reason). Each entry carries `entry_hash`, the SHA-256 of its RFC 8785 form
/// without that member, so a client can pin what it relied on. Nothing is recorded that was never stored:
/// no earlier history is reconstructed. Needs `infrastructure:read`.
#[utoipa::path(
    get,
    path = "/api/v2/catalogue/ledger",
    responses((status = 200, description = "The ledger, oldest entry first", body = LedgerView))
)]
pub async fn get_ledger(State(state): State<AppState>) -> Result<Json<LedgerView>, ApiError> {
    Ok(Json(LedgerView {
        object: "change_ledger".into(),
        catalogue_version: CATALOGUE_VERSION.into(),
        data: change_ledger::ledger(&state.settings.deprecations),
    }))
}
