//! Accepting connections with bounds: at most `max_connections` at once (the rest get 503 and are closed), a
//! request head within `header_timeout` of connecting, and no connection silent in both directions for longer
//! than `idle_timeout`. On shutdown it stops accepting and lets open requests finish within a bound.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

use crate::metrics::Metrics;

/// The bounds on connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// The most open connections.
    pub max_connections: usize,
    /// How long a client may take to send the first request's head.
    pub header_timeout: Duration,
    /// How long a connection may go without reading or writing a byte.
    pub idle_timeout: Duration,
    /// How long open requests may take to finish after shutdown began.
    pub shutdown_timeout: Duration,
}

const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
x-content-type-options: nosniff\r\nconnection: close\r\ncontent-length: 75\r\n\r\n{\"error\":{\"code\":\"busy\",\"message\":\"too many connections; try again later\"}}";

/// Serve `router` on `listener` until `shutdown` turns true, then drain.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    metrics: Arc<Metrics>,
    mut shutdown: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors and the like: pause instead of spinning.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            metrics.connections_refused.inc();
            tokio::spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Watched { stream, activity: Arc::clone(&activity) });
        let mut builder = http1::Builder::new();
        builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
        let connection = graceful.watch(builder.serve_connection(io, TowerToHyperService::new(router.clone())));
        let metrics = Arc::clone(&metrics);
        tokio::spawn(async move {
            let _permit = permit;
            metrics.connections.inc();
            tokio::select! {
                result = connection => {
                    if result.as_ref().is_err_and(hyper::Error::is_timeout) {
                        metrics.connections_timed_out.inc();
                    }
                }
                () = activity.idle_for(limits.idle_timeout) => {
                    metrics.connections_timed_out.inc();
                }
            }
            metrics.connections.dec();
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_timeout) => {
            tracing::warn!("shutdown: requests still open after {:?}; closing them", limits.shutdown_timeout);
        }
    }
}

/// Answer 503 and close, reading what the client sent for a moment first so the close is not a reset that
/// discards the answer. Bounded: never more than half a second.
async fn refuse(mut stream: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 1024];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), io::Error>(())
    })
    .await;
}

/// When a connection last read or wrote a byte.
struct Activity {
    start: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity { start: Instant::now(), last_ms: AtomicU64::new(0) }
    }

    fn touch(&self) {
        let now = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(now, Ordering::Relaxed);
    }

    /// Resolve once nothing was read or written for `idle`.
    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = self.start + Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let deadline = last + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline.into()).await;
        }
    }
}

/// A stream that records its activity.
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        result
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
