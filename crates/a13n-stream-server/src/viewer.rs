//! The run viewer: static HTML, CSS and JavaScript embedded in the binary, served at `/` (the run list),
//! `/runs/{run_id}` (one run's display, followed live) and `/threads/{thread_id}` (every run of a thread as one
//! conversation, followed live). They hold no data, so they need no token: the page asks
//! for it and sends it with every API request.
//!
//! The script is ES modules compiled from TypeScript (`js/viewer`, which imports the `js/display` package's
//! modules) by the pinned `tsc`; the compiled files are committed under `viewer/assets/` and each is served at
//! `/assets/<its path there>` ([`ASSETS`]). CI compiles them again and fails if they differ.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItem};
use utoipa::openapi::{ContentBuilder, ObjectBuilder, ResponseBuilder, Type};

const PAGE: &str = include_str!("viewer/index.html");

/// One file of the viewer: where it is served, its content type and its text.
pub struct Asset {
    /// The route, `/assets/...`.
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// The file.
    pub body: &'static str,
}

macro_rules! assets {
    ($($file:literal => $content_type:literal),* $(,)?) => {
        &[$(Asset {
            path: concat!("/assets/", $file),
            content_type: $content_type,
            body: include_str!(concat!("viewer/assets/", $file)),
        }),*]
    };
}

/// Every file under `viewer/assets/` (a test checks the list against the directory).
pub const ASSETS: &[Asset] = assets![
    "viewer.css" => "text/css; charset=utf-8",
    "favicon.svg" => "image/svg+xml",
    "viewer/src/main.js" => "text/javascript; charset=utf-8",
    "viewer/src/api.js" => "text/javascript; charset=utf-8",
    "viewer/src/dom.js" => "text/javascript; charset=utf-8",
    "viewer/src/markdown.js" => "text/javascript; charset=utf-8",
    "viewer/src/model.js" => "text/javascript; charset=utf-8",
    "viewer/src/render.js" => "text/javascript; charset=utf-8",
    "viewer/src/run.js" => "text/javascript; charset=utf-8",
    "viewer/src/runs.js" => "text/javascript; charset=utf-8",
    "viewer/src/thread.js" => "text/javascript; charset=utf-8",
    "viewer/src/throttle.js" => "text/javascript; charset=utf-8",
    "viewer/src/threadfollow.js" => "text/javascript; charset=utf-8",
    "viewer/src/windowed.js" => "text/javascript; charset=utf-8",
    "display/src/checkpoint.js" => "text/javascript; charset=utf-8",
    "display/src/errors.js" => "text/javascript; charset=utf-8",
    "display/src/fold.js" => "text/javascript; charset=utf-8",
    "display/src/follow.js" => "text/javascript; charset=utf-8",
    "display/src/fragments.js" => "text/javascript; charset=utf-8",
    "display/src/memory.js" => "text/javascript; charset=utf-8",
    "display/src/normalizer.js" => "text/javascript; charset=utf-8",
    "display/src/python.js" => "text/javascript; charset=utf-8",
    "display/src/sha256.js" => "text/javascript; charset=utf-8",
    "display/src/time.js" => "text/javascript; charset=utf-8",
    "display/src/types.js" => "text/javascript; charset=utf-8",
    "display/src/values.js" => "text/javascript; charset=utf-8",
];

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
    path == "/" || path.starts_with("/runs/") || path.starts_with("/threads/") || path.starts_with("/assets/")
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
        (status = 400, description = "A malformed run id: a page saying so for a browser (`Accept: text/html`), the error body otherwise",
            content((crate::wire::ErrorBody = "application/json"), (String = "text/html"))),
    ))]
pub(crate) async fn run_page(headers: HeaderMap, axum::extract::Path(run_id): axum::extract::Path<String>) -> Response {
    if !crate::runs::valid_run_id(&run_id) {
        return match wants_html(&headers) {
            true => error_page("Not a run id", crate::RUN_ID_RULE),
            false => crate::bad_run_id(),
        };
    }
    asset("text/html; charset=utf-8", PAGE)
}

/// The run viewer's view of a thread: its runs, one after another, as one conversation followed live (HTML; no
/// token needed).
#[utoipa::path(get, path = "/threads/{thread_id}", tag = "viewer", security(()), params(crate::routes::ThreadIdParam),
    responses(
        (status = 200, description = "The thread page", content_type = "text/html", body = String),
        (status = 400, description = "A malformed thread id: a page saying so for a browser (`Accept: text/html`), the error body otherwise",
            content((crate::wire::ErrorBody = "application/json"), (String = "text/html"))),
    ))]
pub(crate) async fn thread_page(
    headers: HeaderMap,
    axum::extract::Path(thread_id): axum::extract::Path<String>,
) -> Response {
    if !crate::runs::valid_run_id(&thread_id) {
        return match wants_html(&headers) {
            true => error_page("Not a thread id", crate::THREAD_ID_RULE),
            false => crate::bad_thread_id(),
        };
    }
    asset("text/html; charset=utf-8", PAGE)
}

/// Whether the request is a browser's for a page (its `Accept` names HTML).
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// A viewer page saying what is wrong with its address (`400`), with the way back to the run list. `title` and
/// `message` are this host's own words, never the request's.
fn error_page(title: &str, message: &str) -> Response {
    let body = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title} · a13n-stream</title>\n\
<link rel=\"icon\" href=\"/assets/favicon.svg\" type=\"image/svg+xml\">\n<link rel=\"stylesheet\" href=\"/assets/viewer.css\">\n\
</head>\n<body>\n<header class=\"bar\"><a class=\"home\" href=\"/\">a13n-stream</a></header>\n<main>\n<h1>{title}</h1>\n\
<p>This address names no run or thread this host could hold: {message}.</p>\n<p><a href=\"/\">All runs on this host</a></p>\n\
</main>\n</body>\n</html>\n"
    );
    let mut response = asset("text/html; charset=utf-8", "").into_response();
    *response.status_mut() = StatusCode::BAD_REQUEST;
    *response.body_mut() = axum::body::Body::from(body);
    response
}

/// A route for each of the viewer's files.
pub(crate) fn asset_routes<S: Clone + Send + Sync + 'static>(mut router: Router<S>) -> Router<S> {
    for file in ASSETS {
        router = router.route(file.path, get(move || async move { asset(file.content_type, file.body) }));
    }
    router
}

/// The media type of a content type (`text/css` of `text/css; charset=utf-8`), as OpenAPI names content.
fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or(content_type).trim()
}

/// The viewer's files in the OpenAPI document: one `GET` each, with the content type it is served with.
pub(crate) struct AssetPaths;

impl utoipa::Modify for AssetPaths {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for file in ASSETS {
            let kind = match media_type(file.content_type) {
                "text/css" => "style sheet",
                "image/svg+xml" => "icon",
                _ => "script module",
            };
            let name = file.path.trim_start_matches("/assets/");
            let operation = OperationBuilder::new()
                .tag("viewer")
                .operation_id(Some(format!("asset_{}", name.replace(['/', '.'], "_"))))
                .summary(Some(format!("The run viewer's {kind} {name}")))
                .security(utoipa::openapi::security::SecurityRequirement::default())
                .response(
                    "200",
                    ResponseBuilder::new().description(format!("The {kind}")).content(
                        media_type(file.content_type),
                        ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::String))).build(),
                    ),
                )
                .build();
            openapi.paths.paths.insert(file.path.to_owned(), PathItem::new(HttpMethod::Get, operation));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn files(dir: &Path, into: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("the viewer's assets directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                files(&path, into);
            } else {
                into.push(path);
            }
        }
    }

    /// Every file the TypeScript build wrote (and the style sheet and icon) is served, and nothing else.
    #[test]
    fn every_asset_file_is_served() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/viewer/assets");
        let mut found = Vec::new();
        files(&root, &mut found);
        let mut on_disk: Vec<String> = found
            .iter()
            .map(|path| format!("/assets/{}", path.strip_prefix(&root).expect("under root").to_string_lossy()))
            .collect();
        let mut served: Vec<String> = ASSETS.iter().map(|file| file.path.to_owned()).collect();
        on_disk.sort();
        served.sort();
        assert_eq!(served, on_disk);
        for file in ASSETS {
            let expected = match file.path.rsplit('.').next() {
                Some("css") => "text/css; charset=utf-8",
                Some("svg") => "image/svg+xml",
                _ => "text/javascript; charset=utf-8",
            };
            assert_eq!(file.content_type, expected, "{}", file.path);
        }
    }

    /// The page loads only served files, and every module a served module imports is served too.
    #[test]
    fn the_page_and_its_modules_refer_only_to_served_files() {
        let served: std::collections::HashSet<&str> = ASSETS.iter().map(|file| file.path).collect();
        for reference in ["/assets/viewer.css", "/assets/viewer/src/main.js", "/assets/favicon.svg"] {
            assert!(PAGE.contains(&format!("\"{reference}\"")), "the page loads {reference}");
            assert!(served.contains(reference), "{reference} is served");
        }
        for file in ASSETS.iter().filter(|file| file.path.ends_with(".js")) {
            let dir = &file.path[..file.path.rfind('/').expect("a directory")];
            for line in file.body.lines().filter(|line| line.starts_with("import ") || line.starts_with("export ")) {
                let Some(start) = line.find("from \"") else { continue };
                let specifier = &line[start + 6..line[start + 6..].find('"').expect("a closing quote") + start + 6];
                assert!(
                    specifier.starts_with('.'),
                    "{}: a bare import {specifier} cannot load in a browser",
                    file.path
                );
                let mut parts: Vec<&str> = dir.split('/').collect();
                for part in specifier.split('/') {
                    match part {
                        "." => {}
                        ".." => {
                            parts.pop();
                        }
                        name => parts.push(name),
                    }
                }
                let target = parts.join("/");
                assert!(served.contains(target.as_str()), "{} imports {target}, which is not served", file.path);
            }
        }
    }
}
