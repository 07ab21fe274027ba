//! The exporter's HTTP side: `/metrics` in Prometheus text format,
//! `/healthz`, and a page naming them at `/`. Requests never touch a
//! database: they read what the collectors last published.
//!
//! A small HTTP/1.1 server on `std::net`, written for this one job rather
//! than taken from a general crate, so that every limit is the exporter's
//! own and stated here: how many connections are open at once, how large
//! a request's head may be, how long a client may take to send one or to
//! read an answer, and what the listener does when the process runs out
//! of file descriptors (it backs off and keeps accepting, as Go's
//! `net/http` does for node_exporter). Each connection has a thread of its
//! own, so one client that never reads holds up nobody else; the number
//! of connections bounds the threads and the memory.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::web::WebConfig;
use super::{Log, Shared};
use crate::duration::format_duration;
use crate::error::QctlError;

/// The content type of Prometheus's text format.
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// How long a scrape waits for the first collections after a start.
const FIRST_ROUND_WAIT: Duration = Duration::from_secs(10);
/// The request line and headers together, at most (Prometheus sends
/// about 300 bytes).
pub const MAX_HEAD: usize = 8 << 10;
/// Headers in one request, at most.
const MAX_HEADERS: usize = 64;
/// A request's head (and, with TLS, the handshake before it) must arrive
/// whole within this from its first byte, or from the connection's start.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a kept-alive connection may wait for its next request
/// (Prometheus scrapes every 15 s by default, on the same connection).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// A whole answer must be taken by the client within this.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest pause of the listener after a failed accept.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);
/// The listener's warnings of failed accepts, at most once per this.
const WARN_EVERY: Duration = Duration::from_secs(10);
/// A connection's thread needs little: the answer is built on the heap.
const CONNECTION_STACK: usize = 256 << 10;

/// A bound listener and the address it took (the port, when `:0` asked
/// for any).
pub struct Bound {
    listener: TcpListener,
    pub address: SocketAddr,
}

/// Binds the listening socket: `HOST:PORT`, or `:PORT` for every
/// interface (as node_exporter's `--web.listen-address` takes it).
pub fn bind(listen: &str) -> Result<Bound> {
    let spec = match listen.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => listen.to_string(),
    };
    let address = spec
        .to_socket_addrs()
        .map_err(|err| {
            QctlError::usage(format!(
                "--listen {listen} is not an address to listen on ({err}); write HOST:PORT, \
                 e.g. 127.0.0.1:9187, or :9187 for every interface"
            ))
        })?
        .next()
        .ok_or_else(|| QctlError::usage(format!("--listen {listen} names no address")))?;
    let listener = TcpListener::bind(address).map_err(|err| {
        QctlError::usage(format!(
            "cannot listen on {address}: {err} — is another exporter running there? pass \
             --listen HOST:PORT"
        ))
    })?;
    let address = listener.local_addr()?;
    Ok(Bound { listener, address })
}

/// What the server needs beside the published samples.
pub struct Server {
    pub shared: Arc<Shared>,
    pub web: Arc<WebConfig>,
    pub log: Log,
    pub max_connections: usize,
}

/// Starts the thread that accepts connections until the exporter stops.
pub fn start(bound: Bound, server: Server) -> Result<JoinHandle<()>> {
    Ok(std::thread::Builder::new()
        .name("qctl-http-accept".into())
        .spawn(move || accept_loop(&bound.listener, &Arc::new(server)))?)
}

/// Errors of `accept` that say the listening socket itself is broken;
/// any other (out of file descriptors or memory, a connection reset
/// before it was taken) passes, and the listener tries again.
fn listener_broken(err: &io::Error) -> bool {
    // EBADF, EINVAL, ENOTSOCK, EOPNOTSUPP (Linux and the BSDs agree on
    // the first two; the others differ, and never happen on a socket
    // that was listening).
    matches!(err.raw_os_error(), Some(9 | 22))
}

fn accept_loop(listener: &TcpListener, server: &Arc<Server>) {
    let open = Arc::new(AtomicUsize::new(0));
    let refusals = refuser();
    let mut backoff = Duration::ZERO;
    let mut failing_since: Option<Instant> = None;
    let mut warned = false;
    let mut last_warning: Option<Instant> = None;
    while !server.shared.stopping() {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(err) if listener_broken(&err) => {
                server
                    .shared
                    .listener_failed(format!("the listening socket failed: {err}"));
                return;
            }
            Err(err) => {
                // Out of file descriptors (EMFILE, ENFILE) above all: the
                // connection waits in the backlog, and the listener tries
                // again after a pause that grows, instead of spinning or
                // giving up.
                backoff = (backoff * 2).clamp(Duration::from_millis(5), MAX_ACCEPT_BACKOFF);
                if failing_since.is_none() {
                    failing_since = Some(Instant::now());
                    server.shared.set_listener_ok(false);
                }
                // Said once per episode, and at most every so often when
                // episodes follow each other (a connection ends, one is
                // accepted, the next accept fails again).
                if !warned && last_warning.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
                    warned = true;
                    last_warning = Some(Instant::now());
                    server.log.warn(
                        None,
                        None,
                        &format!(
                            "cannot accept connections: {err} ({} open); trying again, up to \
                             every {}",
                            open.load(Ordering::SeqCst),
                            format_duration(MAX_ACCEPT_BACKOFF)
                        ),
                    );
                }
                std::thread::sleep(backoff);
                continue;
            }
        };
        backoff = Duration::ZERO;
        if failing_since.take().is_some() {
            server.shared.set_listener_ok(true);
        }
        if std::mem::take(&mut warned)
            && let Some(since) = last_warning
        {
            server.log.info(
                None,
                &format!(
                    "accepting connections again after {:.1}s",
                    since.elapsed().as_secs_f64()
                ),
            );
        }
        if open.load(Ordering::SeqCst) >= server.max_connections {
            // When even the refusals are full, the connection is closed
            // unanswered.
            if let Some(refusals) = &refusals {
                let _ = refusals.try_send(stream);
            }
            continue;
        }
        let slot = Slot::take(&open);
        let handler = Arc::clone(server);
        let spawned = std::thread::Builder::new()
            .name("qctl-http".into())
            .stack_size(CONNECTION_STACK)
            .spawn(move || {
                let _slot = slot;
                serve_connection(stream, &handler);
            });
        if let Err(err) = spawned {
            // The closure (the stream, the slot) was dropped with it.
            server.log.warn(
                None,
                None,
                &format!("cannot start a connection's thread: {err}"),
            );
        }
    }
}

/// One of the connections that may be open at once, given back when the
/// connection's thread ends, however it ends.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Slot {
        open.fetch_add(1, Ordering::SeqCst);
        Slot(Arc::clone(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Connections over the limit waiting for their 503, at most.
const REFUSALS: usize = 64;
/// How long a refused connection's request is waited for: it is read
/// before the 503 is sent, so that closing the connection does not reset
/// it under the client before the client has read the answer.
const REFUSAL_READ: Duration = Duration::from_millis(200);
/// How long a refused connection is drained after its 503, at most.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// Starts the one thread that answers connections over the limit; the
/// accept loop hands them over without ever waiting on them.
fn refuser() -> Option<std::sync::mpsc::SyncSender<TcpStream>> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<TcpStream>(REFUSALS);
    std::thread::Builder::new()
        .name("qctl-http-refuse".into())
        .stack_size(CONNECTION_STACK)
        .spawn(move || {
            for stream in rx {
                refuse(stream);
            }
        })
        .ok()?;
    Some(tx)
}

/// A connection over the limit: its request read (briefly), a 503, closed.
fn refuse(mut stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(REFUSAL_READ));
    let _ = stream.set_write_timeout(Some(REFUSAL_READ));
    let mut head = [0u8; 1024];
    let _ = stream.read(&mut head);
    let body = "too many connections: try again later\n";
    let _ = stream.write_all(
        format!(
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    let _ = stream.shutdown(Shutdown::Write);
    // A lingering close: what the client still sends (a request that came
    // late) is read and dropped until it closes its side, so that closing
    // ours does not reset the connection under the answer it has not read.
    let _ = stream.set_read_timeout(Some(REFUSAL_LINGER));
    let until = std::time::Instant::now() + REFUSAL_LINGER;
    while std::time::Instant::now() < until {
        match stream.read(&mut head) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// A connection, plain or TLS; the deadlines are set on the socket under
/// it.
enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl Stream {
    fn socket(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Why no request could be read.
enum Unread {
    /// The client closed, went quiet between requests, or broke the
    /// connection: nothing to answer.
    Gone,
    /// Answer with this status and close.
    Refuse(u16, &'static str),
}

/// One request, as far as the exporter reads it.
struct Request {
    method: String,
    path: String,
    authorization: Option<String>,
    /// Whether the connection may carry the next request.
    keep_alive: bool,
}

fn serve_connection(stream: TcpStream, server: &Server) {
    let _ = stream.set_nodelay(true);
    let mut stream = match &server.web.tls {
        Some(config) => match rustls::ServerConnection::new(Arc::clone(config)) {
            Ok(tls) => Stream::Tls(Box::new(rustls::StreamOwned::new(tls, stream))),
            Err(_) => return,
        },
        None => Stream::Plain(stream),
    };
    // What arrived beyond the request being answered (a pipelined next
    // request); never more than MAX_HEAD.
    let mut pending: Vec<u8> = Vec::new();
    let mut first = true;
    loop {
        let request = match read_request(&mut stream, &mut pending, first) {
            Ok(request) => request,
            Err(Unread::Gone) => break,
            Err(Unread::Refuse(status, why)) => {
                let reply = Reply::text(status, format!("{why}\n"));
                let _ = write_reply(&mut stream, &reply, false, false);
                break;
            }
        };
        first = false;
        let reply = answer(&request, server);
        let head_only = request.method == "HEAD";
        if write_reply(&mut stream, &reply, head_only, request.keep_alive).is_err()
            || !request.keep_alive
        {
            break;
        }
    }
    if let Stream::Tls(tls) = &mut stream {
        tls.conn.send_close_notify();
        let _ = tls.conn.write_tls(&mut tls.sock);
    }
    let _ = stream.socket().shutdown(Shutdown::Both);
}

/// Reads one request's head, within its deadline and size limit.
fn read_request(
    stream: &mut Stream,
    pending: &mut Vec<u8>,
    first: bool,
) -> Result<Request, Unread> {
    let started = Instant::now();
    // The first request must come within HEAD_TIMEOUT of the connection;
    // a kept-alive connection may idle longer before its next one starts.
    let mut deadline = started + if first { HEAD_TIMEOUT } else { IDLE_TIMEOUT };
    if !pending.is_empty() {
        deadline = deadline.min(started + HEAD_TIMEOUT);
    }
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = head_end(pending) {
            let head: Vec<u8> = pending.drain(..end).collect();
            return parse(&head);
        }
        if pending.len() >= MAX_HEAD {
            return Err(if pending.contains(&b'\n') {
                Unread::Refuse(431, "the request's headers are too large")
            } else {
                Unread::Refuse(414, "the request line is too long")
            });
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(if pending.is_empty() {
                Unread::Gone
            } else {
                Unread::Refuse(408, "the request did not arrive in time")
            });
        }
        if stream
            .socket()
            .set_read_timeout(Some(deadline - now))
            .is_err()
        {
            return Err(Unread::Gone);
        }
        let room = (MAX_HEAD - pending.len()).min(chunk.len());
        match stream.read(&mut chunk[..room]) {
            Ok(0) => return Err(Unread::Gone),
            Ok(n) => {
                if pending.is_empty() {
                    // Its first byte: the rest of the head follows soon.
                    deadline = deadline.min(Instant::now() + HEAD_TIMEOUT);
                }
                pending.extend_from_slice(&chunk[..n]);
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Err(Unread::Gone),
        }
    }
}

/// Where the head ends (after its blank line), if it has arrived.
fn head_end(buffer: &[u8]) -> Option<usize> {
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4);
    let lf = buffer
        .windows(2)
        .position(|w| w == b"\n\n")
        .map(|at| at + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn parse(head: &[u8]) -> Result<Request, Unread> {
    let bad = || Unread::Refuse(400, "a malformed request");
    let text = std::str::from_utf8(head).map_err(|_| bad())?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().ok_or_else(bad)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad());
    }
    let mut keep_alive = match version {
        "HTTP/1.1" => true,
        // HTTP/1.0 ends an answer where the connection does.
        "HTTP/1.0" => false,
        _ => return Err(Unread::Refuse(505, "only HTTP/1.0 and HTTP/1.1")),
    };
    let mut authorization = None;
    let mut count = 0;
    for line in lines.filter(|l| !l.is_empty()) {
        count += 1;
        if count > MAX_HEADERS {
            return Err(Unread::Refuse(431, "too many headers"));
        }
        let (name, value) = line.split_once(':').ok_or_else(bad)?;
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(bad());
        }
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "connection" if value.eq_ignore_ascii_case("close") => keep_alive = false,
            // The exporter never reads a body: after a request with one,
            // the connection is closed rather than parsed out of step.
            "content-length" if value != "0" => keep_alive = false,
            "transfer-encoding" => keep_alive = false,
            "authorization" => authorization = Some(value.to_string()),
            _ => {}
        }
    }
    Ok(Request {
        method: method.to_string(),
        path: target.split('?').next().unwrap_or_default().to_string(),
        authorization,
        keep_alive,
    })
}

/// An answer: status, content type, body, and extra headers.
struct Reply {
    status: u16,
    content_type: &'static str,
    body: String,
    headers: Vec<(&'static str, &'static str)>,
}

impl Reply {
    fn text(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
            headers: Vec::new(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Writes the answer whole within WRITE_TIMEOUT, or fails.
fn write_reply(stream: &mut Stream, reply: &Reply, head_only: bool, keep: bool) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !keep {
        out.push_str("Connection: close\r\n");
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if !head_only {
        bytes.extend_from_slice(reply.body.as_bytes());
    }
    let deadline = Instant::now() + WRITE_TIMEOUT;
    let mut written = 0;
    while written < bytes.len() {
        let now = Instant::now();
        if now >= deadline {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.socket().set_write_timeout(Some(deadline - now))?;
        match stream.write(&bytes[written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    // TLS keeps what the socket has not taken yet in its own buffer.
    if let Stream::Tls(tls) = stream {
        while tls.conn.wants_write() {
            let now = Instant::now();
            if now >= deadline {
                return Err(io::ErrorKind::TimedOut.into());
            }
            tls.sock.set_write_timeout(Some(deadline - now))?;
            tls.conn.write_tls(&mut tls.sock)?;
        }
    }
    Ok(())
}

fn answer(request: &Request, server: &Server) -> Reply {
    let shared = &server.shared;
    let path = request.path.as_str();
    let counter = match path {
        "/metrics" => 0,
        "/healthz" => 1,
        _ => 2,
    };
    shared.requests[counter].fetch_add(1, Ordering::SeqCst);
    if !server.web.authorized(request.authorization.as_deref()) {
        let mut reply = Reply::text(401, "unauthorized\n");
        reply.headers.push((
            "WWW-Authenticate",
            "Basic realm=\"qctl\", charset=\"UTF-8\"",
        ));
        return reply;
    }
    let read = matches!(request.method.as_str(), "GET" | "HEAD");
    match path {
        "/metrics" | "/healthz" | "/" if !read => {
            let mut reply = Reply::text(405, "only GET and HEAD\n");
            reply.headers.push(("Allow", "GET, HEAD"));
            reply
        }
        "/metrics" => {
            shared.wait_first_round(FIRST_ROUND_WAIT);
            Reply {
                content_type: METRICS_TYPE,
                ..Reply::text(200, shared.metrics())
            }
        }
        // The process is alive and its listener accepts: whether the
        // databases answer is what /metrics says (qctl_up), not a reason
        // to restart it.
        "/healthz" => match shared.listener_ok() {
            true => Reply::text(200, "ok\n"),
            false => Reply::text(503, "the listener cannot accept connections\n"),
        },
        "/" => Reply::text(
            200,
            "qctl exporter: the queues' metrics are at /metrics, liveness at /healthz\n",
        ),
        _ => Reply::text(404, "not found: qctl serves /metrics and /healthz\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_at_the_first_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nGET"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\n"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }

    #[test]
    fn requests_are_read_strictly() {
        let ok = |head: &str| parse(head.as_bytes()).ok().map(|r| (r.path, r.keep_alive));
        assert_eq!(
            ok("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"),
            Some(("/metrics".into(), true))
        );
        assert_eq!(ok("GET / HTTP/1.0\r\n\r\n"), Some(("/".into(), false)));
        assert_eq!(
            ok("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            Some(("/".into(), false))
        );
        assert_eq!(ok("GET  / HTTP/1.1\r\n\r\n"), None);
        assert_eq!(ok("GET / HTTP/1.1\r\nno colon\r\n\r\n"), None);
        assert_eq!(ok("get / HTTP/1.1\r\n\r\n"), None);
        assert!(matches!(
            parse(b"GET / HTTP/2\r\n\r\n"),
            Err(Unread::Refuse(505, _))
        ));
    }
}
