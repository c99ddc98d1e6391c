//! The run viewer: static HTML, CSS and JavaScript embedded in the binary, served at `/` (the run list) and
//! `/runs/{run_id}` (one run's display, followed live). They hold no data, so they need no token: the page asks
//! for it and sends it with every API request.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("viewer/index.html");
const SCRIPT: &str = include_str!("viewer/viewer.js");
const STYLE: &str = include_str!("viewer/viewer.css");

/// Only this host's own files and API; no inline script or style; not framed.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; \
base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Whether a path is one of the viewer's (served without a token).
pub fn is_viewer_path(path: &str) -> bool {
    path == "/" || path.starts_with("/runs/") || path.starts_with("/assets/")
}

/// The run viewer's run list (HTML; no token needed).
#[utoipa::path(get, path = "/", tag = "viewer", security(()),
    responses((status = 200, description = "The run list page", content_type = "text/html", body = String)))]
pub(crate) async fn page() -> Response {
    asset("text/html; charset=utf-8", PAGE)
}

/// The run viewer's view of one run, followed live (HTML; no token needed).
#[utoipa::path(get, path = "/runs/{run_id}", tag = "viewer", security(()), params(crate::routes::RunIdParam),
    responses(
        (status = 200, description = "The run page", content_type = "text/html", body = String),
        (status = 400, description = "A malformed run id", body = crate::wire::ErrorBody),
    ))]
pub(crate) async fn run_page(axum::extract::Path(run_id): axum::extract::Path<String>) -> Response {
    if !crate::runs::valid_run_id(&run_id) {
        return crate::bad_run_id();
    }
    asset("text/html; charset=utf-8", PAGE)
}

/// The run viewer's script.
#[utoipa::path(get, path = "/assets/viewer.js", tag = "viewer", security(()),
    responses((status = 200, description = "JavaScript", content_type = "text/javascript", body = String)))]
pub(crate) async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

/// The run viewer's style sheet.
#[utoipa::path(get, path = "/assets/viewer.css", tag = "viewer", security(()),
    responses((status = 200, description = "CSS", content_type = "text/css", body = String)))]
pub(crate) async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}
