//! The one error shape every route answers with: `{"error": {"code": ..., "message": ..., ...}}`, and query
//! parameters whose errors come back in it.

use axum::extract::{FromRequestParts, Query};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

/// The `Retry-After` of every 503 that asks the client to come back (storage failed, ingest busy), in seconds.
pub const RETRY_AFTER_SECONDS: &str = "1";

/// An error answer: a status, a stable `code` a client can match on, a message, and fields that say more.
#[derive(Debug)]
pub struct Problem {
    status: StatusCode,
    body: Map<String, Value>,
    headers: Vec<(&'static str, String)>,
}

impl Problem {
    /// A problem with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Problem {
        let mut body = Map::new();
        body.insert("code".into(), code.into());
        body.insert("message".into(), Value::String(message.into()));
        Problem { status, body, headers: Vec::new() }
    }

    /// Add a field to the error object.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Problem {
        self.body.insert(key.into(), value.into());
        self
    }

    /// Add a response header.
    #[must_use]
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Problem {
        self.headers.push((name, value.into()));
        self
    }

    /// A storage failure: logged, and answered with 503 and `Retry-After` (storage that failed may come back, as
    /// a database that restarts does).
    pub fn storage(error: impl std::fmt::Display) -> Problem {
        tracing::error!(%error, "storage failure");
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "storage", format!("storage: {error}"))
            .header("retry-after", RETRY_AFTER_SECONDS)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(json!({ "error": self.body }))).into_response();
        for (name, value) in self.headers {
            if let Ok(value) = value.parse() {
                response.headers_mut().insert(name, value);
            }
        }
        response
    }
}

/// Query parameters whose parse errors are answered as a [`Problem`] (400, code `query`). A parameter the route does
/// not take is refused too (the structs deny unknown fields), so a misspelt `limit` is not quietly the default.
#[derive(Debug)]
pub struct Params<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(Params(value)),
            Err(rejection) => {
                // The parameter and why, without the extractor's own wording ("Failed to deserialize ...").
                let text = rejection.body_text();
                let reason = text.split_once("query string: ").map_or(text.as_str(), |(_, reason)| reason);
                // serde names them fields: "lmit: unknown field `lmit`, expected one of `after`, `limit`".
                let reason = match reason.split_once("unknown field ") {
                    Some((_, rest)) => {
                        format!("unknown parameter {}", rest.replacen(", expected", ", this route takes", 1))
                    }
                    None => reason.to_owned(),
                };
                Err(Problem::new(StatusCode::BAD_REQUEST, "query", format!("bad query parameter: {reason}")))
            }
        }
    }
}

/// A count, position or ordinal in a query parameter: a whole number from 0 to 2^63 - 1 (what storage holds).
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(try_from = "u64")]
pub struct Count(pub u64);

impl TryFrom<u64> for Count {
    type Error = String;

    fn try_from(value: u64) -> Result<Count, String> {
        if value > i64::MAX as u64 {
            return Err(format!("{value} is larger than {}", i64::MAX));
        }
        Ok(Count(value))
    }
}

/// A page size in a query parameter (`limit`): 1 to [`PAGE_MAX`](crate::routes::PAGE_MAX); any other number is
/// answered 400 rather than read as the nearest size.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(try_from = "u64")]
pub struct Limit(pub usize);

impl TryFrom<u64> for Limit {
    type Error = String;

    fn try_from(value: u64) -> Result<Limit, String> {
        let max = crate::routes::PAGE_MAX;
        match usize::try_from(value) {
            Ok(size) if (1..=max).contains(&size) => Ok(Limit(size)),
            _ => Err(format!("a page holds 1 to {max}, not {value}")),
        }
    }
}
