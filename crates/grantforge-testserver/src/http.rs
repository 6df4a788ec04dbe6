//! A small HTTP/1.1 server side: one request per connection (`Connection: close`), `Content-Length` or
//! chunked request bodies, `Expect: 100-continue`, and full control over what is written (which the fault modes
//! need: closing without an answer, truncated bodies, huge bodies).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::ops::Deref;
use std::sync::Arc;

/// Largest request head (request line and headers).
const MAX_HEAD: u64 = 64 * 1024;

/// A request.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query, without `?` (empty when there is none).
    pub query: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub peer: Option<SocketAddr>,
}

impl Request {
    /// The first value of a header (names compare case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the query holds `name=true` (the test-control switches).
    pub fn query_flag(&self, name: &str) -> bool {
        self.query
            .split('&')
            .any(|pair| pair == format!("{name}=true"))
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The peer closed (or timed out) before sending a request: nothing to answer.
    Gone,
    /// A malformed request: answer 400.
    Bad(String),
    /// The body is larger than allowed: answer 413.
    TooLarge,
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

fn read_line(reader: &mut impl BufRead, budget: &mut u64) -> Result<Vec<u8>, ReadError> {
    let mut line = Vec::new();
    let n = reader
        .take(*budget)
        .read_until(b'\n', &mut line)
        .map_err(|_| ReadError::Gone)?;
    *budget = budget.saturating_sub(n as u64);
    if n == 0 {
        return Err(ReadError::Gone);
    }
    if line.last() != Some(&b'\n') {
        return Err(if *budget == 0 {
            ReadError::Bad("request head too large".into())
        } else {
            ReadError::Gone
        });
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(line)
}

/// A connection the server answers one request on: plain TCP, or TLS over it (`tls.rs`).
pub(crate) trait Connection: Read + Write {
    /// The TCP connection underneath.
    fn tcp(&self) -> &TcpStream;

    /// Ends the connection after the answer.
    fn finish(&mut self) {
        close(self.tcp());
    }
}

impl Connection for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

/// Reads one request; `max_body` bounds the body.
pub(crate) fn read_request(
    stream: &mut dyn Connection,
    max_body: usize,
) -> Result<Request, ReadError> {
    let peer = stream.tcp().peer_addr().ok();
    let mut reader = BufReader::new(stream);
    let mut budget = MAX_HEAD;
    let mut line = read_line(&mut reader, &mut budget)?;
    while line.is_empty() {
        line = read_line(&mut reader, &mut budget)?;
    }
    let line = latin1(&line);
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Bad("malformed request line".into()));
    };
    if !version.starts_with("HTTP/1.")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_alphabetic())
    {
        return Err(ReadError::Bad("unsupported request line".into()));
    }
    let mut headers = Vec::new();
    loop {
        let raw = read_line(&mut reader, &mut budget)?;
        if raw.is_empty() {
            break;
        }
        let text = latin1(&raw);
        let Some((name, value)) = text.split_once(':') else {
            return Err(ReadError::Bad("malformed header".into()));
        };
        if name.is_empty() || name.contains([' ', '\t']) {
            return Err(ReadError::Bad("malformed header name".into()));
        }
        headers.push((
            name.to_string(),
            value.trim_matches([' ', '\t']).to_string(),
        ));
        if headers.len() > 200 {
            return Err(ReadError::Bad("too many headers".into()));
        }
    }
    // Absolute-form targets keep only their path.
    let target = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    let without_fragment = target.split('#').next().unwrap_or("");
    let (path, query) = without_fragment
        .split_once('?')
        .unwrap_or((without_fragment, ""));
    let mut request = Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers,
        body: Vec::new(),
        peer,
    };
    let chunked = request.header("transfer-encoding").is_some_and(|te| {
        te.split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("chunked"))
    });
    let lengths: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.as_str())
        .collect();
    let length = match lengths.as_slice() {
        [] => None,
        [first, rest @ ..] if rest.iter().all(|v| v == first) => Some(
            first
                .parse::<u64>()
                .map_err(|_| ReadError::Bad("malformed Content-Length".into()))?,
        ),
        _ => return Err(ReadError::Bad("conflicting Content-Length headers".into())),
    };
    let expects_continue = request
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"));
    if chunked {
        if expects_continue {
            let _ = reader.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        request.body = read_chunked(&mut reader, max_body)?;
    } else if let Some(length) = length {
        if length > max_body as u64 {
            return Err(ReadError::TooLarge);
        }
        if expects_continue && length > 0 {
            let _ = reader.get_mut().write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        let mut body = vec![0u8; length as usize];
        reader.read_exact(&mut body).map_err(|_| ReadError::Gone)?;
        request.body = body;
    }
    Ok(request)
}

fn read_chunked(reader: &mut impl BufRead, max_body: usize) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        let mut budget = 4096;
        let line = latin1(&read_line(reader, &mut budget)?);
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ReadError::Bad("malformed chunk size".into()))?;
        if size == 0 {
            let mut budget = MAX_HEAD;
            while !read_line(reader, &mut budget)?.is_empty() {}
            return Ok(body);
        }
        if body.len().saturating_add(size) > max_body {
            return Err(ReadError::TooLarge);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|_| ReadError::Gone)?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).map_err(|_| ReadError::Gone)?;
        if &crlf != b"\r\n" {
            return Err(ReadError::Bad("malformed chunk".into()));
        }
    }
}

/// A response body: shared (the current snapshot, no copy) or owned.
#[derive(Debug)]
pub(crate) enum Body {
    Shared(Arc<Vec<u8>>),
    Owned(Vec<u8>),
}

impl Deref for Body {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Shared(b) => b,
            Body::Owned(b) => b,
        }
    }
}

/// A response.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Response {
    pub fn new(status: u16) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Owned(Vec::new()),
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = Body::Owned(body);
        self
    }

    pub fn shared_body(mut self, body: Body) -> Self {
        self.body = body;
        self
    }

    /// The first value of a header.
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The reason phrase of a status.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// The status line and headers of a response, ending with the empty line.
fn head(response: &Response) -> String {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    if has_body(response) {
        head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    head
}

fn has_body(response: &Response) -> bool {
    !(response.status == 304 || response.status == 204 || response.status < 200)
}

/// How much of the body is written: all of it, or with `truncate` its first half.
fn written_body(response: &Response, truncate: bool) -> &[u8] {
    match (has_body(response), truncate) {
        (false, _) => &[],
        (true, false) => &response.body,
        (true, true) => &response.body[..response.body.len() / 2],
    }
}

/// The bytes [`write_response`] writes for this response.
pub(crate) fn wire_bytes(response: &Response, truncate: bool) -> u64 {
    (head(response).len() + written_body(response, truncate).len()) as u64
}

/// Writes a response and closes the connection. With `truncate`, `Content-Length` announces the whole body but
/// only its first half is written.
pub(crate) fn write_response(
    stream: &mut dyn Connection,
    response: &Response,
    truncate: bool,
) -> io::Result<()> {
    stream.write_all(head(response).as_bytes())?;
    for chunk in written_body(response, truncate).chunks(1 << 20) {
        stream.write_all(chunk)?;
    }
    stream.flush()?;
    stream.finish();
    Ok(())
}

/// Whether a request's `Accept-Encoding` names gzip (with a weight other than 0).
pub(crate) fn accepts_gzip(request: &Request) -> bool {
    request.header("accept-encoding").is_some_and(|value| {
        value.split(',').any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            parts
                .next()
                .is_some_and(|name| name.eq_ignore_ascii_case("gzip"))
                && parts.all(|p| p.replace(' ', "") != "q=0")
        })
    })
}

/// `bytes`, gzip-compressed (default level).
pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    use flate2::write::GzEncoder;
    let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(bytes)
        .expect("writing into memory does not fail");
    encoder.finish().expect("writing into memory does not fail")
}

/// Closes a connection: no more writes, then drop.
pub(crate) fn close(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    // Read what the peer may still send (briefly), so that the close is a FIN rather than a reset that could
    // destroy the answer in flight.
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(200)));
    let mut sink = [0u8; 4096];
    let mut reader = stream;
    for _ in 0..16 {
        match reader.read(&mut sink) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
}
