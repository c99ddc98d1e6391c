//! Who may talk to the host: the `Host` a request names (DNS rebinding), the `Origin` a browser sends
//! (cross-site requests), and the bearer token.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::problem::Problem;
use crate::Shared;

/// The routes answered without a token (liveness probes).
pub const OPEN_PATHS: &[&str] = &["/healthz"];

/// The host name of a `Host` header value, without its port (`[::1]:80` gives `::1`).
fn host_name(value: &str) -> &str {
    if let Some(rest) = value.strip_prefix('[') {
        return rest.split_once(']').map_or(rest, |(name, _)| name);
    }
    value.rsplit_once(':').filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit())).map_or(value, |(n, _)| n)
}

/// Whether a host name always means this machine.
fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether the host serves a request naming `host` (the whole `Host` header value).
pub fn host_allowed(host: &str, loopback: bool, allowed: &[String]) -> bool {
    let name = host_name(host);
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(name) || a.eq_ignore_ascii_case(host)) {
        return true;
    }
    if loopback {
        is_loopback_name(name)
    } else {
        allowed.is_empty()
    }
}

/// Whether a request's `Origin` may use the host: listed, or the host's own origin (a page it served).
pub fn origin_allowed(origin: &str, host: Option<&str>, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a == "*" || a.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let own = |scheme: &str| host.is_some_and(|host| origin.strip_prefix(scheme).is_some_and(|rest| rest == host));
    own("http://") || own("https://")
}

/// Refuse requests for foreign host names (421) and from foreign origins (403), before anything else runs.
pub(crate) async fn hosts_and_origins(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let config = &app.config;
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if let Some(host) = host {
        if !host_allowed(host, config.listen.ip().is_loopback(), &config.allow_hosts) {
            return Problem::new(
                StatusCode::MISDIRECTED_REQUEST,
                "host",
                format!("this host does not serve {host:?}; see --allow-host"),
            )
            .into_response();
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(origin, host, &config.allow_origins) {
            return Problem::new(
                StatusCode::FORBIDDEN,
                "origin",
                format!("requests from origin {origin:?} are not allowed; see --allow-origin"),
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// The token a request presents: `Authorization: Bearer <token>`, the scheme in any case.
fn presented(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Compare in constant time: both sides are hashed first, so neither the content nor the length leaks.
pub fn token_matches(presented: &str, expected: &str) -> bool {
    let (a, b) = (Sha256::digest(presented.as_bytes()), Sha256::digest(expected.as_bytes()));
    bool::from(a.as_slice().ct_eq(b.as_slice()))
}

/// Require the bearer token on every route but [`OPEN_PATHS`] and the viewer's pages (which hold no data: they
/// read it through the API, token and all) when the host has one.
pub(crate) async fn authorize(State(app): State<Shared>, request: Request, next: Next) -> Response {
    if let Some(token) = &app.config.token {
        let path = request.uri().path();
        let open = OPEN_PATHS.contains(&path) || crate::viewer::is_viewer_path(path);
        let refusal = match presented(request.headers()) {
            _ if open => None,
            None => Some("a bearer token is required"),
            Some(presented) if !token_matches(presented, token) => Some("the bearer token does not match"),
            Some(_) => None,
        };
        if let Some(message) = refusal {
            return Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
                .header("www-authenticate", r#"Bearer realm="a13n-stream""#)
                .into_response();
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_binds_serve_only_loopback_names() {
        for good in ["localhost", "localhost:8787", "127.0.0.1:80", "127.1.2.3", "[::1]:8787", "app.localhost"] {
            assert!(host_allowed(good, true, &[]), "{good}");
        }
        for bad in ["evil.example", "evil.example:8787", "10.0.0.1", "localhost.evil.example", "[::2]"] {
            assert!(!host_allowed(bad, true, &[]), "{bad}");
        }
        assert!(host_allowed("box.lan:8787", true, &["box.lan".into()]));
        assert!(host_allowed("anything", false, &[]));
        assert!(!host_allowed("anything", false, &["box.lan".into()]));
    }

    #[test]
    fn origins_are_listed_or_the_hosts_own() {
        let allowed = vec!["https://app.example".to_owned()];
        assert!(origin_allowed("https://app.example", Some("127.0.0.1:1"), &allowed));
        assert!(origin_allowed("http://127.0.0.1:8787", Some("127.0.0.1:8787"), &[]));
        assert!(!origin_allowed("https://evil.example", Some("127.0.0.1:8787"), &allowed));
        assert!(!origin_allowed("null", Some("127.0.0.1:8787"), &[]));
        assert!(origin_allowed("null", None, &["*".into()]));
    }

    #[test]
    fn tokens_compare_by_value_only() {
        assert!(token_matches("s3cret", "s3cret"));
        assert!(!token_matches("s3cret ", "s3cret"));
        assert!(!token_matches("s3cre", "s3cret"));
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bEaReR  s3cret".parse().unwrap());
        assert_eq!(presented(&headers), Some("s3cret"));
        headers.insert(header::AUTHORIZATION, "Basic s3cret".parse().unwrap());
        assert_eq!(presented(&headers), None);
    }
}
