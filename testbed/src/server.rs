//! The S3 API server: s3s-fs serving a directory, behind our own accept loop.
//!
//! The stock s3s-fs binary leaves Nagle's algorithm on, and a GET on a reused connection then
//! stalls about 40 ms on delayed ACKs; this loop sets `TCP_NODELAY` on every accepted stream.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::service::{S3Service, S3ServiceBuilder};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::sync::watch;

use crate::error::TestBedError;
use crate::fast_get::FastGetFs;
use crate::faults::{slow_down_response, Fault, FaultBody, Faults};
use crate::request_log::{LoggedBody, Pending, RequestLog};

/// The S3 service with every request logged ([`RequestLog`]) and the fault mode's faults
/// applied to GETs of objects ([`crate::faults`]).
#[derive(Clone)]
struct Logged {
    inner: S3Service,
    log: RequestLog,
    faults: Arc<Faults>,
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Logged {
    type Response = hyper::Response<LoggedBody<FaultBody>>;
    type Error = s3s::HttpError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let pending = Pending::start(&self.log, &req);
        let object_get = req.method() == hyper::Method::GET && !pending.record.key.is_empty();
        let fault = if object_get {
            self.faults.on_get()
        } else {
            None
        };
        let logged = |mut pending: Pending, resp: hyper::Response<s3s::Body>, cut_stall_ns| {
            pending.head(&resp);
            let length = pending.record.range.map(|(a, b)| b - a);
            let (parts, body) = resp.into_parts();
            let body = match (cut_stall_ns, length) {
                (Some(stall_ns), Some(len)) if parts.status.is_success() => {
                    FaultBody::cut_in_half(body, len, stall_ns)
                }
                _ => FaultBody::whole(body),
            };
            hyper::Response::from_parts(
                parts,
                LoggedBody {
                    inner: body,
                    pending: Some(pending),
                },
            )
        };
        let cut_stall_ns = match fault {
            Some(Fault::SlowDown { .. }) => {
                return Box::pin(async move { Ok(logged(pending, slow_down_response(), None)) })
            }
            // Hyper closes the connection on a service error, before any response.
            Some(Fault::ResetBeforeResponse | Fault::Restart { .. }) => {
                return Box::pin(async move {
                    Err(s3s::HttpError::new(
                        "the test bed closed the connection (fault mode)".into(),
                    ))
                })
            }
            Some(Fault::ResetMidBody) => Some(0),
            Some(Fault::Stall { stall_ns }) => Some(stall_ns.max(1)),
            None => None,
        };
        let fut = hyper::service::Service::call(&self.inner, req);
        Box::pin(async move {
            let resp = fut.await?;
            Ok(logged(pending, resp, cut_stall_ns))
        })
    }
}

/// A running s3s-fs server on `127.0.0.1`.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) log: RequestLog,
    pub(crate) faults: Arc<Faults>,
    stop: watch::Sender<bool>,
}

impl Server {
    /// Serves `root` (one subdirectory per bucket) with SigV4 authentication by the one given
    /// key pair, on a fresh port of `127.0.0.1`, as tasks of `runtime`.
    pub(crate) fn start(
        runtime: &Runtime,
        root: &Path,
        access_key: &str,
        secret_key: &str,
    ) -> Result<Server, TestBedError> {
        let fs = s3s_fs::FileSystem::new(root).map_err(|e| TestBedError::Server {
            path: root.to_path_buf(),
            message: format!("{e:?}"),
        })?;
        // s3s-fs canonicalises its root the same way; our GetObject bodies read under it.
        let canonical_root = root.canonicalize().map_err(|e| TestBedError::io(root, e))?;
        let mut builder = S3ServiceBuilder::new(FastGetFs::new(fs, canonical_root));
        builder.set_auth(SimpleAuth::from_single(access_key, secret_key));
        let service = builder.build();

        let bind: SocketAddr = ([127, 0, 0, 1], 0).into();
        // Bound with std and handed to tokio (no block_on), so that starting works from inside
        // another runtime too.
        let std_listener = std::net::TcpListener::bind(bind)
            .map_err(|e| TestBedError::socket("binding the S3 server", bind, e))?;
        let addr = std_listener
            .local_addr()
            .map_err(|e| TestBedError::socket("reading the S3 server's address", bind, e))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| TestBedError::socket("configuring the S3 server", addr, e))?;
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(std_listener)
                .map_err(|e| TestBedError::socket("registering the S3 server", addr, e))?
        };
        let (stop, stopped) = watch::channel(false);
        let log = RequestLog::new();
        let faults = Arc::new(Faults::new());
        let service = Logged {
            inner: service,
            log: log.clone(),
            faults: faults.clone(),
        };
        runtime.spawn(accept_loop(listener, service, stopped));
        Ok(Server {
            addr,
            log,
            faults,
            stop,
        })
    }

    /// Stops accepting. Open connections end when the runtime shuts down.
    pub(crate) fn stop(&self) {
        let _ = self.stop.send(true);
    }
}

/// The send buffer of each accepted connection.
const SEND_BUFFER_BYTES: usize = 256 * 1024;

async fn accept_loop(listener: TcpListener, service: Logged, mut stopped: watch::Receiver<bool>) {
    let http = ConnBuilder::new(TokioExecutor::new());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // A transient accept failure (e.g. too many open files): back off a little.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
            },
            _ = stopped.changed() => return,
        };
        // A server that is down (fault mode) takes no connections.
        if service.faults.refuse_connection() {
            drop(stream);
            continue;
        }
        // Failing to set it only costs latency, not correctness, so the connection is kept.
        let _ = stream.set_nodelay(true);
        // A real server streams a response as the network takes it; with loopback's
        // auto-tuned multi-MiB send buffers this one would push several MiB of each response at
        // once, a CPU burst that delays other connections' first bytes on a two-core machine.
        // Like nodelay, failing to set it costs only fidelity.
        let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER_BYTES);
        let connection = http
            .serve_connection(TokioIo::new(stream), service.clone())
            .into_owned();
        // A restart (fault mode) closes every open connection.
        let restarted = service.faults.restarted();
        let faults = service.faults.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                () = restarted => faults.count_closed_by_restart(),
            }
        });
    }
}
