//! The exporter's HTTP side (tiny_http: a small synchronous server):
//! `/metrics` in Prometheus text format, `/healthz`, and a page naming
//! them at `/`. Requests never touch a database: they read what the
//! collectors last published.

use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Result;
use tiny_http::{Header, Method, Request, Response, Server};

use super::Shared;
use crate::error::QctlError;

/// The content type of Prometheus's text format.
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Threads answering requests; each answer is a copy of text in memory.
const RESPONDERS: usize = 4;
/// How long a scrape waits for the first collections after a start.
const FIRST_ROUND_WAIT: Duration = Duration::from_secs(10);

/// A bound server and the address it took (the port, when `:0` asked
/// for any).
pub struct Bound {
    server: Server,
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
    let server = Server::from_listener(listener, None)
        .map_err(|err| anyhow::anyhow!("cannot serve on {address}: {err}"))?;
    Ok(Bound { server, address })
}

/// Starts the threads that answer requests until the exporter stops.
pub fn start(bound: Bound, shared: Arc<Shared>) -> Result<Vec<JoinHandle<()>>> {
    let server = Arc::new(bound.server);
    (0..RESPONDERS)
        .map(|n| {
            let server = Arc::clone(&server);
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("qctl-http-{n}"))
                .spawn(move || {
                    while !shared.stopping.load(Ordering::SeqCst) {
                        match server.recv_timeout(Duration::from_millis(100)) {
                            Ok(Some(request)) => answer(request, &shared),
                            Ok(None) => {}
                            // The listening socket failed: nothing more
                            // will come.
                            Err(_) => break,
                        }
                    }
                })
                .map_err(anyhow::Error::from)
        })
        .collect()
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn answer(request: Request, shared: &Shared) {
    let path = request.url().split('?').next().unwrap_or_default();
    let read = matches!(request.method(), Method::Get | Method::Head);
    let counter = match path {
        "/metrics" => 0,
        "/healthz" => 1,
        _ => 2,
    };
    shared.requests[counter].fetch_add(1, Ordering::SeqCst);
    let response = match path {
        "/metrics" | "/healthz" | "/" if !read => Response::from_string("only GET and HEAD\n")
            .with_status_code(405)
            .with_header(header("Allow", "GET, HEAD")),
        "/metrics" => {
            shared.wait_first_round(FIRST_ROUND_WAIT);
            Response::from_string(shared.metrics())
                .with_header(header("Content-Type", METRICS_TYPE))
        }
        // The process is alive and serving: whether the databases answer
        // is what /metrics says (qctl_up), not a reason to restart it.
        "/healthz" => Response::from_string("ok\n"),
        "/" => Response::from_string(
            "qctl exporter: the queues' metrics are at /metrics, liveness at /healthz\n",
        ),
        _ => Response::from_string("not found: qctl serves /metrics and /healthz\n")
            .with_status_code(404),
    };
    let response = if path == "/metrics" {
        response
    } else {
        response.with_header(header("Content-Type", "text/plain; charset=utf-8"))
    };
    // A client that went away is not the exporter's problem.
    let _ = request.respond(response);
}
