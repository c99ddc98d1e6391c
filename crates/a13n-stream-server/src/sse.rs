//! Server-Sent Events written as bytes: the frames of every event a subscriber has ready go out as one chunk of
//! the response body, with a keep-alive comment when nothing was sent for the keep-alive interval.
//!
//! `/events` delivers each committed batch to every subscriber; framing its events one by one (a frame object, a
//! poll of the body stream and a reset of the keep-alive timer for each) cost the host more than the events'
//! bytes. The frames are those of axum's `Sse` byte for byte (`id:`, `event:`, one `data:` line per line of the
//! data, a blank line), and so is the keep-alive comment (`:`).

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream, StreamExt};

/// Append one frame to `out`: `event:` when named, `id:` when given, then the data, as axum writes it (each `\n`
/// or `\r` ends a `data:` line and the next opens one; no `data:` line for empty data).
pub(crate) fn write_frame(out: &mut Vec<u8>, event: Option<&str>, id: Option<&str>, data: &str) {
    if let Some(event) = event {
        field(out, "event", event);
    }
    if let Some(id) = id {
        field(out, "id", id);
    }
    if !data.is_empty() {
        let data = data.as_bytes();
        out.extend_from_slice(b"data: ");
        let mut from = 0;
        for at in data.iter().enumerate().filter(|(_, byte)| matches!(byte, b'\n' | b'\r')).map(|(at, _)| at) {
            out.extend_from_slice(&data[from..=at]);
            out.extend_from_slice(b"data: ");
            from = at + 1;
        }
        out.extend_from_slice(&data[from..]);
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// One frame as a body chunk (see [`write_frame`]).
pub(crate) fn frame(event: Option<&str>, id: Option<&str>, data: &str) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + 64);
    write_frame(&mut out, event, id, data);
    Bytes::from(out)
}

fn field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.push(b'\n');
}

/// The keep-alive comment.
const KEEP_ALIVE: &[u8] = b":\n\n";

/// A `text/event-stream` response of `chunks` (each one or more whole frames), with a keep-alive comment after
/// `keep_alive` without a chunk. It ends when `chunks` does.
pub(crate) fn response(keep_alive: Duration, chunks: impl Stream<Item = Bytes> + Send + 'static) -> Response {
    let body = stream::unfold(Box::pin(chunks), move |mut chunks| async move {
        tokio::select! {
            chunk = chunks.next() => chunk.map(|chunk| (Ok::<_, Infallible>(chunk), chunks)),
            _ = tokio::time::sleep(keep_alive) => Some((Ok(Bytes::from_static(KEEP_ALIVE)), chunks)),
        }
    });
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], Body::from_stream(body))
        .into_response()
}

#[cfg(test)]
mod tests {
    use axum::response::sse::Event;
    use axum::response::Sse;

    use super::*;

    async fn body_of(response: Response) -> Vec<u8> {
        axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec()
    }

    /// The frames are axum's, byte for byte, for every shape of data.
    #[tokio::test]
    async fn frames_are_axums() {
        let cases: [(Option<&str>, Option<&str>, &str); 5] = [
            (None, Some("0-1"), r#"{"type":"RUN_STARTED"}"#),
            (Some("end"), None, r#"{"position":"0-2","reason":"deleted"}"#),
            (Some("observed"), Some("0-3"), "two\nlines"),
            (None, Some("0-4"), "crlf\r\nand\rcr\n"),
            (None, None, ""),
        ];
        let mut ours = Vec::new();
        let mut events = Vec::new();
        for (name, id, data) in cases {
            write_frame(&mut ours, name, id, data);
            let mut event = Event::default();
            if let Some(name) = name {
                event = event.event(name);
            }
            if let Some(id) = id {
                event = event.id(id);
            }
            events.push(Ok::<_, Infallible>(event.data(data)));
        }
        let axums = body_of(Sse::new(stream::iter(events)).into_response()).await;
        assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(axums).unwrap());
    }

    #[tokio::test]
    async fn chunks_pass_through_and_a_quiet_stream_is_kept_alive() {
        let chunks = stream::iter([Bytes::from_static(b"id: 0-1\ndata: a\n\n")]).chain(stream::once(async {
            tokio::time::sleep(Duration::from_millis(120)).await;
            Bytes::from_static(b"id: 0-2\ndata: b\n\n")
        }));
        let response = response(Duration::from_millis(20), chunks);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "text/event-stream");
        let body = String::from_utf8(body_of(response).await).unwrap();
        assert!(body.starts_with("id: 0-1\ndata: a\n\n:\n\n"), "{body:?}");
        assert!(body.ends_with(":\n\nid: 0-2\ndata: b\n\n"), "{body:?}");
    }
}
