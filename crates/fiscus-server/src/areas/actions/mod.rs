//! Financial Actions. So far: autonomy assessment evidence.

mod assessment_evidence;

use crate::state::AppState;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(assessment_evidence::post_evidence, assessment_evidence::list_evidence))
}
