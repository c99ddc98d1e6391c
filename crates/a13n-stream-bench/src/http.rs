//! A minimal HTTP client for a host on this machine (tests and the load benchmark). [`request`] and the SSE
//! readers speak HTTP/1.0, one request per connection, the response read to the end, so Server-Sent Events arrive
//! close-delimited, without chunking; a [`Connection`] keeps one HTTP/1.1 connection open for many requests.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A response: status, headers and body.
#[derive(Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The header lines, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Response {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

fn connect(address: &str) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    Ok(stream)
}

/// Send one request and read the whole response.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Response> {
    let mut stream = connect(address)?;
    let mut head = format!("{method} {path} HTTP/1.0\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {address}\r\n"));
    }
    // Source lines are NDJSON; a caller may name another type (or test a wrong one) in `headers`.
    if method == "POST" && !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-type")) {
        head.push_str("Content-Type: application/x-ndjson\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = status_of(head);
    let headers = head.lines().skip(1).filter_map(header_of).collect();
    Ok(Response { status, headers, body: body.to_owned() })
}

/// One HTTP/1.1 connection kept open across requests, as a real client's pool keeps it: no connect and close a
/// request. A response must carry `Content-Length` (every JSON response of the host does). A connection the
/// server closed between requests (an idle timeout) is opened again and the request sent once more; after a
/// response that says `Connection: close`, or any failure mid-exchange, the next request opens a new one.
pub struct Connection {
    address: String,
    reader: Option<BufReader<TcpStream>>,
}

/// How an exchange on a kept-alive connection failed.
enum Failed {
    /// Before any byte of the answer: the server may have closed the connection between requests.
    Unanswered(std::io::Error),
    /// After the answer began.
    Answering(std::io::Error),
}

impl Connection {
    /// Connect to `address`.
    pub fn open(address: &str) -> std::io::Result<Connection> {
        Ok(Connection { address: address.to_owned(), reader: Some(kept_alive(address)?) })
    }

    /// Send one request with `body` and read its response; the connection stays open for the next.
    pub fn request(&mut self, method: &str, path: &str, content_type: &str, body: &[u8]) -> std::io::Result<Response> {
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
            self.address,
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        let reused = self.reader.is_some();
        let reader = match self.reader.take() {
            Some(reader) => reader,
            None => kept_alive(&self.address)?,
        };
        match exchange(reader, &request) {
            Ok((response, reader)) => {
                let close = response.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
                self.reader = (!close).then_some(reader);
                Ok(response)
            }
            Err(Failed::Unanswered(_)) if reused => {
                let reader = kept_alive(&self.address)?;
                let (response, reader) = exchange(reader, &request).map_err(Failed::into_error)?;
                self.reader = Some(reader);
                Ok(response)
            }
            Err(failed) => Err(failed.into_error()),
        }
    }
}

impl Failed {
    fn into_error(self) -> std::io::Error {
        match self {
            Failed::Unanswered(error) | Failed::Answering(error) => error,
        }
    }
}

/// A connection to `address` for many requests.
fn kept_alive(address: &str) -> std::io::Result<BufReader<TcpStream>> {
    let stream = connect(address)?;
    // A request is written whole in one write; without this, a body written after its head would wait for the
    // acknowledgement of the head (Nagle's algorithm against delayed ACKs: 40 ms a request).
    stream.set_nodelay(true)?;
    Ok(BufReader::new(stream))
}

/// Write `request` and read its whole response on `reader`.
fn exchange(mut reader: BufReader<TcpStream>, request: &[u8]) -> Result<(Response, BufReader<TcpStream>), Failed> {
    reader.get_mut().write_all(request).map_err(Failed::Unanswered)?;
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) => return Err(Failed::Unanswered(std::io::ErrorKind::UnexpectedEof.into())),
        Ok(_) => {}
        Err(error) => return Err(Failed::Unanswered(error)),
    }
    let answering = |error: std::io::Error| Failed::Answering(error);
    let cut = || Failed::Answering(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "response head cut short"));
    let status = status_of(&line);
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(answering)? == 0 {
            return Err(cut());
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        headers.push(header_of(&line).ok_or_else(cut)?);
    }
    let mut response = Response { status, headers, body: String::new() };
    let Some(length) = response.header("content-length").and_then(|v| v.parse::<usize>().ok()) else {
        let error = std::io::Error::new(std::io::ErrorKind::InvalidData, "a response without Content-Length");
        return Err(Failed::Answering(error));
    };
    let mut body = vec![0; length];
    reader.read_exact(&mut body).map_err(answering)?;
    response.body = String::from_utf8_lossy(&body).into_owned();
    Ok((response, reader))
}

/// The status code of a response's status line (0 when it has none).
fn status_of(line: &str) -> u16 {
    line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A header line as its name (lower case) and value.
fn header_of(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once(':')?;
    Some((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
}

/// One Server-Sent Event: its id, name and data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id:` field.
    pub id: String,
    /// The `event:` field (empty for the default `message`).
    pub event: String,
    /// The `data:` field.
    pub data: String,
}

/// Read Server-Sent Events from `path` until the stream ends, the connection fails, or `limit` events came.
/// Returns the events and whether the stream ended by itself.
pub fn sse(address: &str, path: &str, last_event_id: Option<&str>, limit: usize) -> (Vec<SseEvent>, bool) {
    let mut events = Vec::new();
    let ended = sse_each(address, path, last_event_id, Duration::from_secs(30), |event| {
        events.push(event);
        events.len() < limit
    });
    (events, ended)
}

/// Read Server-Sent Events, handing each to `on_event` until it returns `false`, the stream ends (`true` is
/// returned), or the connection fails or sends no event for `idle` (keep-alive comments do not count, so a
/// stream that only keeps itself alive still ends).
pub fn sse_each(
    address: &str,
    path: &str,
    last_event_id: Option<&str>,
    idle: Duration,
    mut on_event: impl FnMut(SseEvent) -> bool,
) -> bool {
    let Ok(mut stream) = TcpStream::connect(address) else { return false };
    if stream.set_read_timeout(Some(idle)).is_err() {
        return false;
    }
    let mut head = format!("GET {path} HTTP/1.0\r\nHost: {address}\r\nAccept: text/event-stream\r\n");
    if let Some(id) = last_event_id {
        head.push_str(&format!("Last-Event-ID: {id}\r\n"));
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    // Skip the response head.
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) if line == "\r\n" || line == "\n" => break,
            Ok(_) => {}
        }
    }
    let (mut id, mut name, mut data) = (String::new(), String::new(), String::new());
    let mut last_event = Instant::now();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return true,
            Err(_) => return false,
            Ok(_) => {}
        }
        let text = line.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !data.is_empty() {
                last_event = Instant::now();
                let event = SseEvent {
                    id: std::mem::take(&mut id),
                    event: std::mem::take(&mut name),
                    data: std::mem::take(&mut data),
                };
                if !on_event(event) {
                    return false;
                }
            } else if last_event.elapsed() >= idle {
                return false;
            }
        } else if let Some(value) = text.strip_prefix("id:") {
            id = value.trim_start().to_owned();
        } else if let Some(value) = text.strip_prefix("event:") {
            name = value.trim_start().to_owned();
        } else if let Some(value) = text.strip_prefix("data:") {
            data = value.strip_prefix(' ').unwrap_or(value).to_owned();
        }
    }
}
