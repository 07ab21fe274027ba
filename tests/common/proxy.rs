//! A TCP proxy between qctl and a real server that cuts the connection at
//! a chosen point of the conversation: after the server has committed a
//! write but before its answer reaches qctl (the outcome qctl cannot know),
//! or between two statements (a connection lost mid-command). It reads
//! just enough of each wire protocol to find that point: PostgreSQL's
//! typed messages, MySQL's numbered packets.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where to cut, counted across every connection through the proxy.
#[derive(Debug, Clone)]
pub enum Cut {
    /// PostgreSQL: at the `nth` CommandComplete whose tag starts with
    /// `tag` ("COMMIT", "UPDATE", "DELETE"), keep everything the server
    /// sends from it through its ReadyForQuery (by then the server has
    /// committed it), and close both sides: the write stands, qctl never
    /// hears so.
    PgSwallow { tag: &'static str, nth: usize },
    /// PostgreSQL: after the `nth` such exchange has reached qctl whole
    /// (through its ReadyForQuery), close both sides when qctl sends its
    /// next message, which never reaches the server: the next statement
    /// finds the connection gone.
    PgAfter { tag: &'static str, nth: usize },
    /// MySQL/MariaDB: at the `nth` COM_QUERY whose text starts with
    /// `query` ("COMMIT"), send it on, keep the server's answer, close.
    MysqlSwallow { query: &'static str, nth: usize },
    /// MySQL/MariaDB: after the server answered the `nth` such query and
    /// qctl got the answer, close when qctl sends its next packet, which
    /// never reaches the server.
    MysqlAfter { query: &'static str, nth: usize },
}

pub struct Proxy {
    pub port: u16,
    /// How many matching exchanges went through (cut or not).
    pub seen: Arc<AtomicUsize>,
    /// Whether the cut happened.
    pub cut: Arc<AtomicUsize>,
}

impl Proxy {
    /// Listens on 127.0.0.1 (a free port) and forwards each connection to
    /// `upstream`, cutting as `cut` says.
    pub fn start(upstream: &str, cut: Cut) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let upstream = upstream.to_string();
        let (seen2, done2) = (seen.clone(), done.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let (cut, seen, done) = (cut.clone(), seen2.clone(), done2.clone());
                std::thread::spawn(move || relay(client, server, cut, seen, done));
            }
        });
        Proxy {
            port,
            seen,
            cut: done,
        }
    }

    pub fn was_cut(&self) -> bool {
        self.cut.load(Ordering::SeqCst) > 0
    }
}

/// Ends a cut connection: the server's side at once; qctl's side after
/// what was sent to it (nothing, when the answer was swallowed), so qctl
/// reads it and then finds the connection closed.
fn close(client: &TcpStream, server: &TcpStream) {
    let _ = server.shutdown(Shutdown::Both);
    let _ = client.shutdown(Shutdown::Write);
}

/// One connection: client to server copied as is (MySQL's queries are
/// watched), server to client framed message by message.
fn relay(
    client: TcpStream,
    server: TcpStream,
    cut: Cut,
    seen: Arc<AtomicUsize>,
    done: Arc<AtomicUsize>,
) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    // Set when the client sent the query the cut waits for (MySQL).
    let armed = Arc::new(AtomicUsize::new(0));
    // Set once an "after" cut's answer reached qctl: its next message
    // ends the connection.
    let after = Arc::new(AtomicUsize::new(0));
    let upward = {
        let (mut from, mut to) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        let (cut, seen, armed, after) = (cut.clone(), seen.clone(), armed.clone(), after.clone());
        let (client, server) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || {
            let mysql = matches!(cut, Cut::MysqlSwallow { .. } | Cut::MysqlAfter { .. });
            loop {
                let chunk = if mysql {
                    read_mysql_packet(&mut from)
                } else {
                    let mut buffer = vec![0u8; 64 << 10];
                    match from.read(&mut buffer) {
                        Ok(0) | Err(_) => None,
                        Ok(n) => {
                            buffer.truncate(n);
                            Some(buffer)
                        }
                    }
                };
                let Some(chunk) = chunk else { break };
                if after.load(Ordering::SeqCst) == 1 {
                    let _ = server.shutdown(Shutdown::Both);
                    let _ = client.shutdown(Shutdown::Both);
                    break;
                }
                if let Cut::MysqlSwallow { query, nth } | Cut::MysqlAfter { query, nth } = cut {
                    let is_query = chunk.len() > 5
                        && chunk[4] == 0x03
                        && String::from_utf8_lossy(&chunk[5..])
                            .trim_start()
                            .to_ascii_uppercase()
                            .starts_with(query);
                    if is_query && seen.fetch_add(1, Ordering::SeqCst) + 1 == nth {
                        armed.store(1, Ordering::SeqCst);
                    }
                }
                if to.write_all(&chunk).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        })
    };
    let (mut from, mut to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
    match cut {
        Cut::PgSwallow { tag, nth } | Cut::PgAfter { tag, nth } => {
            let swallow = matches!(cut, Cut::PgSwallow { .. });
            let mut cutting = false;
            while let Some(message) = read_pg_message(&mut from) {
                let matches = message[0] == b'C'
                    && message[5..].starts_with(tag.as_bytes())
                    && done.load(Ordering::SeqCst) == 0;
                if matches && seen.fetch_add(1, Ordering::SeqCst) + 1 == nth {
                    cutting = true;
                }
                if !(cutting && swallow) && to.write_all(&message).is_err() {
                    break;
                }
                if cutting && message[0] == b'Z' {
                    done.fetch_add(1, Ordering::SeqCst);
                    if swallow {
                        close(&client, &server);
                        break;
                    }
                    after.store(1, Ordering::SeqCst);
                    cutting = false;
                }
            }
        }
        Cut::MysqlSwallow { .. } | Cut::MysqlAfter { .. } => {
            let swallow = matches!(cut, Cut::MysqlSwallow { .. });
            while let Some(packet) = read_mysql_packet(&mut from) {
                let answering = armed.load(Ordering::SeqCst) == 1;
                if !(answering && swallow) && to.write_all(&packet).is_err() {
                    break;
                }
                if answering {
                    // The answer to the query: an OK or ERR packet ends it.
                    armed.store(2, Ordering::SeqCst);
                    done.fetch_add(1, Ordering::SeqCst);
                    if swallow {
                        close(&client, &server);
                        break;
                    }
                    after.store(1, Ordering::SeqCst);
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = upward.join();
}

/// One PostgreSQL message from the server: type, length, body.
fn read_pg_message(from: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = [0u8; 5];
    from.read_exact(&mut head).ok()?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut message = head.to_vec();
    message.resize(1 + len, 0);
    from.read_exact(&mut message[5..]).ok()?;
    Some(message)
}

/// One MySQL packet: three bytes of length, the sequence number, the
/// payload.
fn read_mysql_packet(from: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = [0u8; 4];
    from.read_exact(&mut head).ok()?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
    let mut packet = head.to_vec();
    packet.resize(4 + len, 0);
    from.read_exact(&mut packet[4..]).ok()?;
    Some(packet)
}

/// A TCP proxy that can go silent: while `hold` is set, it forwards
/// nothing either way and closes nothing (it reads and drops what comes),
/// as a proxy or a load balancer that keeps sockets open to a server that
/// is gone. Connections that arrive while it holds are held too.
pub struct Holder {
    pub port: u16,
    hold: Arc<std::sync::atomic::AtomicBool>,
    /// Chunks dropped while holding: a statement sent and never answered.
    pub swallowed: Arc<AtomicUsize>,
}

impl Holder {
    pub fn start(upstream: &str) -> Holder {
        use std::sync::atomic::AtomicBool;
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let hold = Arc::new(AtomicBool::new(false));
        let swallowed = Arc::new(AtomicUsize::new(0));
        let upstream = upstream.to_string();
        let (hold2, swallowed2) = (hold.clone(), swallowed.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let (hold, swallowed) = (hold2.clone(), swallowed2.clone());
                    std::thread::spawn(move || pass(from, to, &hold, &swallowed));
                }
            }
        });
        Holder {
            port,
            hold,
            swallowed,
        }
    }

    /// Silent from now on (true), or forwarding again (false) on every
    /// connection.
    pub fn hold(&self, on: bool) {
        self.hold.store(on, Ordering::SeqCst);
    }
}

fn pass(
    mut from: TcpStream,
    mut to: TcpStream,
    hold: &std::sync::atomic::AtomicBool,
    swallowed: &AtomicUsize,
) {
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if hold.load(Ordering::SeqCst) {
            swallowed.fetch_add(1, Ordering::SeqCst);
            continue;
        }
        if to.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    // Held connections are never closed by the proxy: only a side that
    // closes ends them.
    if !hold.load(Ordering::SeqCst) {
        let _ = to.shutdown(Shutdown::Write);
    }
}
