//! The S3 API server: s3s-fs serving a directory, behind our own accept loop.
//!
//! The stock s3s-fs binary leaves Nagle's algorithm on, and a GET on a reused connection then
//! stalls about 40 ms on delayed ACKs; this loop sets `TCP_NODELAY` on every accepted stream.

use std::net::SocketAddr;
use std::path::Path;
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
use crate::request_log::{LoggedBody, Pending, RequestLog};

/// The S3 service with every request logged ([`RequestLog`]).
#[derive(Clone)]
struct Logged {
    inner: S3Service,
    log: RequestLog,
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Logged {
    type Response = hyper::Response<LoggedBody<s3s::Body>>;
    type Error = s3s::HttpError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let mut pending = Pending::start(&self.log, &req);
        let fut = hyper::service::Service::call(&self.inner, req);
        Box::pin(async move {
            let resp = fut.await?;
            pending.head(&resp);
            let (parts, body) = resp.into_parts();
            Ok(hyper::Response::from_parts(
                parts,
                LoggedBody {
                    inner: body,
                    pending: Some(pending),
                },
            ))
        })
    }
}

/// A running s3s-fs server on `127.0.0.1`.
#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) log: RequestLog,
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
        let service = Logged {
            inner: service,
            log: log.clone(),
        };
        runtime.spawn(accept_loop(listener, service, stopped));
        Ok(Server { addr, log, stop })
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
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}
