//! The host's contract, generated from the handlers' annotations (utoipa) and served at `GET /openapi.json`.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use crate::viewer::AssetPaths;
use crate::wire;

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "a13n-stream host",
        description = "A durable Agent Stream Protocol host: exactly-once ingest of Harness source lines, AG-UI \
events as Server-Sent Events with exact replay, display items and checkpoints. Every error is \
`{\"error\": {\"code\", \"message\", ...}}`. Any route may also answer 403 (a foreign `Origin`), 421 (a `Host` \
that is not served) or, when the host has a token, 401; a connection beyond the connection limit gets 503."
    ),
    paths(
        crate::routes::healthz,
        crate::routes::metrics,
        crate::routes::list_runs,
        crate::routes::delete_run,
        crate::routes::thread_runs,
        crate::ingest::ingest,
        crate::subscribe::events,
        crate::display::display,
        crate::observed::observed,
        crate::threads::thread_events,
        crate::threads::thread_observed,
        crate::routes::items,
        crate::routes::snapshot,
        crate::routes::rejections,
        openapi_json,
        crate::viewer::page,
        crate::viewer::run_page,
        crate::viewer::thread_page,
    ),
    components(schemas(
        wire::Health,
        wire::Ingested,
        wire::RejectedLine,
        wire::RunSummary,
        wire::RunOutcome,
        wire::RunsPage,
        wire::ThreadRunsPage,
        wire::ItemsPage,
        wire::DisplayFrame,
        wire::DisplayEnd,
        wire::RejectionsPage,
        wire::Snapshot,
        wire::ErrorBody,
        wire::ErrorDetail,
    )),
    modifiers(&AssetPaths, &Guards),
    tags(
        (name = "runs", description = "Ingest and read runs"),
        (name = "host", description = "Liveness, metrics, contract"),
        (name = "viewer", description = "The run viewer's page and files"),
    ),
)]
pub struct ApiDoc;

/// The answers every route may give before it runs (bearer token, origin, host), and the bearer scheme.
struct Guards;

fn error(description: &str) -> RefOr<Response> {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            utoipa::openapi::ContentBuilder::new()
                .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build()
        .into()
}

impl Modify for Guards {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        for item in openapi.paths.paths.values_mut() {
            for operation in [&mut item.get, &mut item.post, &mut item.delete].into_iter().flatten() {
                let open = operation.operation_id.as_deref() == Some("healthz")
                    || operation.tags.as_ref().is_some_and(|tags| tags.iter().any(|tag| tag == "viewer"));
                let responses = &mut operation.responses.responses;
                if !open {
                    responses
                        .entry("401".into())
                        .or_insert_with(|| error("A bearer token is required (when the host has one)"));
                }
                responses.entry("403".into()).or_insert_with(|| error("The request's Origin is not allowed"));
                responses.entry("421".into()).or_insert_with(|| error("This host does not serve the request's Host"));
            }
        }
        openapi.security =
            Some(vec![utoipa::openapi::security::SecurityRequirement::new("bearer", Vec::<String>::new())]);
    }
}

/// The document as this host serves it: without a token, no route needs one.
pub fn document(token: bool) -> utoipa::openapi::OpenApi {
    let mut document = ApiDoc::openapi();
    if !token {
        document.security = None;
        if let Some(components) = document.components.as_mut() {
            components.security_schemes.clear();
        }
        for item in document.paths.paths.values_mut() {
            for operation in [&mut item.get, &mut item.post, &mut item.delete].into_iter().flatten() {
                operation.security = None;
                operation.responses.responses.remove("401");
            }
        }
    }
    document
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "host", responses((status = 200, description = "The OpenAPI document", body = Object)))]
pub(crate) async fn openapi_json(
    axum::extract::State(app): axum::extract::State<crate::Shared>,
) -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(document(app.config.token.is_some()))
}
