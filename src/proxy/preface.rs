//! The HTTP/2 preface of a client, read as pingora's HTTP/2 codec reads it: [`Watched`] passes
//! the decrypted bytes through untouched and feeds them to [`h2::Observer`] until it has the
//! first HEADERS frame, then keeps the print in the connection's [`ConnPrint`] and reads on
//! without looking.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_trait::async_trait;
use pingora_core::protocols::tls::SslDigest;
use pingora_core::protocols::{Peek, Stream};
use tokio::io::{AsyncRead, ReadBuf};

use crate::fingerprint::{self, h2, ConnPrint};

/// A client stream whose HTTP/2 preface is being watched.
pub struct Watched {
    inner: Stream,
    /// Until the print is taken (or the observer gave up).
    observer: Option<Box<h2::Observer>>,
    /// Where the print goes: the connection's TLS digest, whose extension is its [`ConnPrint`].
    digest: Arc<SslDigest>,
}

impl Watched {
    /// `stream`, watched when its TLS digest carries a [`ConnPrint`] (else as it is).
    pub fn wrap(stream: Stream) -> Stream {
        let digest = stream
            .get_ssl_digest()
            .filter(|d| d.extension.get::<ConnPrint>().is_some());
        match digest {
            Some(digest) => Box::new(Watched {
                inner: stream,
                observer: Some(Box::new(h2::Observer::new())),
                digest,
            }),
            None => stream,
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let (Poll::Ready(Ok(())), Some(observer)) = (&polled, this.observer.as_mut()) {
            if observer.feed(&buf.filled()[before..]) {
                // Done: the print, or given up on a preface no browser sends.
                if let Some(conn) = this.digest.extension.get::<ConnPrint>() {
                    conn.set_h2(observer.take().ok_or(fingerprint::Unreadable));
                }
                this.observer = None;
            }
        }
        polled
    }
}

impl std::fmt::Debug for Watched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("inner", &self.inner)
            .field("watching", &self.observer.is_some())
            .finish()
    }
}

crate::wrapped_stream!(Watched, inner);

#[async_trait]
impl Peek for Watched {}
