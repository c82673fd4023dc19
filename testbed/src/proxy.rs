//! The latency and bandwidth injector: a user-space TCP proxy on loopback.
//!
//! These machines have no kernel netem, so each accepted connection is relayed by plain threads.
//! Each direction has a reader that timestamps every chunk it reads and a writer that forwards
//! the chunk at `read_time + rtt/2`; the server-to-client writer is also paced to a set
//! bandwidth per connection (see [`Pacer`]). Threads and `std::thread::sleep` rather than tokio:
//! tokio's timer wheel rounds every sleep up to the next millisecond, a thread sleeps to within
//! tens of microseconds, and the injected values must hold to about a millisecond.
//!
//! A paced direction holds at most about a bandwidth-delay product (plus a margin) read but not
//! yet written, as a real path does: beyond it the proxy stops reading and TCP flow control holds
//! the server back (the upstream socket's receive buffer is small for the same reason). Reading
//! a whole large response at once would burst the CPU of this small machine and delay the other
//! connections' first bytes by milliseconds.
//!
//! Not modelled: the TCP handshake (a new connection costs no injected round trip; the
//! simulator's store model has no connection set-up either), loss, and a NIC cap shared by
//! connections.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::TestBedError;
use crate::pacer::Pacer;

/// Bytes read from a socket at a time.
const READ_BUFFER_BYTES: usize = 256 * 1024;
/// Room kept in a paced direction beyond the bandwidth-delay product, as time at the bandwidth.
const PACED_MARGIN_NS: u64 = 50_000_000;
/// How often a reader waiting for room checks that its connection is still open.
const ROOM_POLL: Duration = Duration::from_millis(20);
/// Receive buffer of a paced connection's upstream socket.
const UPSTREAM_RECV_BUFFER_BYTES: usize = 256 * 1024;
/// How long the proxy waits for the upstream server to accept a connection.
const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What the proxy injects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyConfig {
    /// The server the proxy relays to.
    pub upstream: SocketAddr,
    /// Injected round trip in nanoseconds: each direction is delayed by half of it.
    pub rtt_ns: u64,
    /// Server-to-client bandwidth per connection in bytes per second; `None` or `Some(0)` is
    /// unpaced.
    pub bandwidth_bytes_per_s: Option<u64>,
}

/// A running proxy on `127.0.0.1`. Dropping it closes every relayed connection and joins its
/// threads.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// State the accept thread and the relay threads share.
#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    next_connection: AtomicU64,
    /// Open connections by number (ordered, so shutdown is deterministic): both sockets, for
    /// shutting them down on stop, and the relay threads, for joining.
    connections: Mutex<BTreeMap<u64, Connection>>,
}

#[derive(Debug)]
struct Connection {
    sockets: [TcpStream; 2],
    threads: Vec<JoinHandle<()>>,
}

/// Bytes of one direction read but not yet written, bounded by `limit`.
struct InFlight {
    bytes: Mutex<u64>,
    room: Condvar,
    limit: u64,
    closed: AtomicBool,
}

impl InFlight {
    /// No bound (an unpaced direction forwards as fast as it reads).
    fn unbounded() -> InFlight {
        InFlight::with_limit(u64::MAX)
    }

    /// A paced direction: the bandwidth-delay product, a margin, and two read buffers.
    fn paced(bandwidth_bytes_per_s: u64, delay: Duration) -> InFlight {
        let ns = delay.as_nanos() + u128::from(PACED_MARGIN_NS);
        let bdp = u128::from(bandwidth_bytes_per_s) * ns / 1_000_000_000;
        let limit = u64::try_from(bdp).unwrap_or(u64::MAX);
        InFlight::with_limit(limit.saturating_add(2 * READ_BUFFER_BYTES as u64))
    }

    fn with_limit(limit: u64) -> InFlight {
        InFlight {
            bytes: Mutex::new(0),
            room: Condvar::new(),
            limit,
            closed: AtomicBool::new(false),
        }
    }

    /// Waits until fewer than `limit` bytes are in flight; false once the writer has gone.
    fn wait_for_room(&self) -> bool {
        let mut bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        while *bytes >= self.limit {
            if self.closed.load(Ordering::SeqCst) {
                return false;
            }
            bytes = self
                .room
                .wait_timeout(bytes, ROOM_POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        !self.closed.load(Ordering::SeqCst)
    }

    fn add(&self, n: usize) {
        let mut bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        *bytes = bytes.saturating_add(n as u64);
    }

    fn remove(&self, n: usize) {
        let mut bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        *bytes = bytes.saturating_sub(n as u64);
        self.room.notify_one();
    }

    /// The writer has ended: a waiting reader stops.
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.room.notify_all();
    }
}

/// One chunk read from one side, due on the other side at `due`.
struct Chunk {
    due: Instant,
    data: Vec<u8>,
}

impl Proxy {
    /// Binds `127.0.0.1:0` and relays every accepted connection to `config.upstream`.
    pub fn start(config: ProxyConfig) -> Result<Proxy, TestBedError> {
        let bind: SocketAddr = ([127, 0, 0, 1], 0).into();
        let listener = TcpListener::bind(bind)
            .map_err(|e| TestBedError::socket("binding the proxy", bind, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| TestBedError::socket("reading the proxy's address", bind, e))?;
        let shared = Arc::new(Shared::default());
        let accept_shared = shared.clone();
        let accept = std::thread::Builder::new()
            .name("testbed-proxy-accept".into())
            .spawn(move || accept_loop(listener, config, accept_shared))
            .map_err(|source| TestBedError::Runtime {
                what: "proxy accept thread",
                source,
            })?;
        Ok(Proxy {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections relayed so far.
    pub fn connections_accepted(&self) -> u64 {
        self.shared.next_connection.load(Ordering::SeqCst)
    }

    /// Stops accepting, closes every relayed connection and joins every thread. Idempotent.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            // Wake the blocking accept; it sees the flag and returns.
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
            let _ = accept.join();
        }
        let connections = std::mem::take(
            &mut *self
                .shared
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for connection in connections.values() {
            for socket in &connection.sockets {
                let _ = socket.shutdown(Shutdown::Both);
            }
        }
        for (_, connection) in connections {
            for thread in connection.threads {
                let _ = thread.join();
            }
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, config: ProxyConfig, shared: Arc<Shared>) {
    for incoming in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = incoming else {
            // A transient accept failure (e.g. too many open files): back off a little.
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        // A connection that cannot be relayed is closed; the client sees the failure.
        let _ = relay(client, &config, &shared);
        reap_finished(&shared);
    }
}

/// Starts the four relay threads of one connection.
fn relay(client: TcpStream, config: &ProxyConfig, shared: &Arc<Shared>) -> std::io::Result<()> {
    let paced = config.bandwidth_bytes_per_s.is_some_and(|b| b > 0);
    let server = connect_upstream(config.upstream, paced)?;
    // Without nodelay, Nagle plus delayed ACK stall small writes by ~40 ms.
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let half_rtt = Duration::from_nanos(config.rtt_ns / 2);
    let bandwidth = config.bandwidth_bytes_per_s.unwrap_or(0);
    let id = shared.next_connection.fetch_add(1, Ordering::SeqCst);
    let threads = vec![
        spawn_direction(
            format!("testbed-proxy-{id}-up"),
            client.try_clone()?,
            server.try_clone()?,
            half_rtt,
            None,
            shared.clone(),
        )?,
        spawn_direction(
            format!("testbed-proxy-{id}-down"),
            server.try_clone()?,
            client.try_clone()?,
            half_rtt,
            Pacer::new(bandwidth),
            shared.clone(),
        )?,
    ]
    .into_iter()
    .flatten()
    .collect();
    shared
        .connections
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(
            id,
            Connection {
                sockets: [client, server],
                threads,
            },
        );
    Ok(())
}

/// Connects to the server; on a paced connection with a small receive buffer, so that what the
/// server can push ahead of the pacing is a few hundred KiB rather than the several MiB that
/// loopback auto-tuning allows.
fn connect_upstream(upstream: SocketAddr, paced: bool) -> std::io::Result<TcpStream> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(upstream),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    if paced {
        socket.set_recv_buffer_size(UPSTREAM_RECV_BUFFER_BYTES)?;
    }
    socket.connect_timeout(&upstream.into(), UPSTREAM_CONNECT_TIMEOUT)?;
    Ok(socket.into())
}

/// Joins the threads of connections whose relays have all ended, so a long run does not keep
/// one entry per connection ever made.
fn reap_finished(shared: &Shared) {
    let mut connections = shared
        .connections
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let done: Vec<u64> = connections
        .iter()
        .filter(|(_, c)| c.threads.iter().all(JoinHandle::is_finished))
        .map(|(id, _)| *id)
        .collect();
    for id in done {
        if let Some(connection) = connections.remove(&id) {
            for thread in connection.threads {
                let _ = thread.join();
            }
        }
    }
}

/// One direction: a reader thread and a writer thread joined by a channel.
fn spawn_direction(
    name: String,
    from: TcpStream,
    to: TcpStream,
    delay: Duration,
    pacer: Option<Pacer>,
    shared: Arc<Shared>,
) -> std::io::Result<[JoinHandle<()>; 2]> {
    let (tx, rx) = channel();
    let from_for_writer = from.try_clone()?;
    let in_flight = Arc::new(match &pacer {
        Some(p) => InFlight::paced(p.bandwidth_bytes_per_s(), delay),
        None => InFlight::unbounded(),
    });
    let reader_in_flight = in_flight.clone();
    let reader = std::thread::Builder::new()
        .name(format!("{name}-read"))
        .spawn(move || read_side(from, delay, tx, &reader_in_flight))?;
    let writer = std::thread::Builder::new()
        .name(format!("{name}-write"))
        .spawn(move || {
            write_side(rx, to, from_for_writer, pacer, &shared, &in_flight);
            in_flight.close();
        })?;
    Ok([reader, writer])
}

/// Reads chunks as they arrive and stamps each with the time it is due on the other side.
fn read_side(mut from: TcpStream, delay: Duration, tx: Sender<Chunk>, in_flight: &InFlight) {
    let mut buf = vec![0u8; READ_BUFFER_BYTES];
    loop {
        if !in_flight.wait_for_room() {
            return;
        }
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return, // dropping `tx` tells the writer the stream ended
            Ok(n) => {
                let chunk = Chunk {
                    due: Instant::now() + delay,
                    data: buf[..n].to_vec(),
                };
                in_flight.add(n);
                if tx.send(chunk).is_err() {
                    return;
                }
            }
        }
    }
}

/// Forwards each chunk when due (and paced), then half-closes the other side.
fn write_side(
    rx: Receiver<Chunk>,
    mut to: TcpStream,
    from: TcpStream,
    mut pacer: Option<Pacer>,
    shared: &Shared,
    in_flight: &InFlight,
) {
    let epoch = Instant::now();
    let result = (|| -> std::io::Result<()> {
        while let Ok(chunk) = rx.recv() {
            if shared.stop.load(Ordering::SeqCst) {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            match pacer.as_mut() {
                None => {
                    sleep_until(chunk.due);
                    to.write_all(&chunk.data)?;
                    in_flight.remove(chunk.data.len());
                }
                Some(pacer) => {
                    // Scheduled from the due time, not from when this thread woke, so a late
                    // wake-up is made up by the next piece rather than carried forward.
                    let ready_ns = nanos_since(epoch, chunk.due);
                    let piece_bytes = pacer.piece_bytes();
                    for piece in chunk.data.chunks(piece_bytes) {
                        if shared.stop.load(Ordering::SeqCst) {
                            return Err(std::io::ErrorKind::Interrupted.into());
                        }
                        let now_ns = nanos_since(epoch, Instant::now());
                        let send_at_ns = pacer.schedule(now_ns, ready_ns, piece.len());
                        sleep_until(epoch + Duration::from_nanos(send_at_ns));
                        to.write_all(piece)?;
                        in_flight.remove(piece.len());
                    }
                }
            }
        }
        Ok(())
    })();
    match result {
        // The source ended cleanly: pass the end on, the other direction goes on.
        Ok(()) => {
            let _ = to.shutdown(Shutdown::Write);
        }
        // The destination is gone or the proxy stops: tear the whole connection down so the
        // reader on the other side does not wait forever.
        Err(_) => {
            let _ = to.shutdown(Shutdown::Both);
            let _ = from.shutdown(Shutdown::Both);
        }
    }
}

fn nanos_since(epoch: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX)
}

fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}
