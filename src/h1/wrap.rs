//! A stream that wraps pingora's client stream to watch or bound its reads passes everything
//! else straight through: [`wrapped_stream!`] writes those impls once.

/// Implements every trait of pingora's `IO` but `AsyncRead` and `Peek` for `$ty`, by passing
/// each call on to its field `$inner` (a `pingora_core::protocols::Stream`).
#[macro_export]
#[doc(hidden)]
macro_rules! wrapped_stream {
    ($ty:ty, $inner:ident) => {
        impl tokio::io::AsyncWrite for $ty {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                tokio::io::AsyncWrite::poll_write(
                    std::pin::Pin::new(&mut self.get_mut().$inner),
                    cx,
                    buf,
                )
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                tokio::io::AsyncWrite::poll_write_vectored(
                    std::pin::Pin::new(&mut self.get_mut().$inner),
                    cx,
                    bufs,
                )
            }

            fn is_write_vectored(&self) -> bool {
                tokio::io::AsyncWrite::is_write_vectored(&self.$inner)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                tokio::io::AsyncWrite::poll_flush(
                    std::pin::Pin::new(&mut self.get_mut().$inner),
                    cx,
                )
            }

            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                tokio::io::AsyncWrite::poll_shutdown(
                    std::pin::Pin::new(&mut self.get_mut().$inner),
                    cx,
                )
            }
        }

        #[async_trait::async_trait]
        impl pingora_core::protocols::Shutdown for $ty {
            async fn shutdown(&mut self) {
                pingora_core::protocols::Shutdown::shutdown(&mut *self.$inner).await
            }
        }

        impl pingora_core::protocols::UniqueID for $ty {
            fn id(&self) -> pingora_core::protocols::UniqueIDType {
                pingora_core::protocols::UniqueID::id(&*self.$inner)
            }
        }

        impl pingora_core::protocols::Ssl for $ty {
            fn get_ssl(&self) -> Option<&pingora_core::protocols::tls::TlsRef> {
                pingora_core::protocols::Ssl::get_ssl(&*self.$inner)
            }

            fn get_ssl_digest(
                &self,
            ) -> Option<std::sync::Arc<pingora_core::protocols::tls::SslDigest>> {
                pingora_core::protocols::Ssl::get_ssl_digest(&*self.$inner)
            }

            fn selected_alpn_proto(&self) -> Option<pingora_core::protocols::ALPN> {
                pingora_core::protocols::Ssl::selected_alpn_proto(&*self.$inner)
            }
        }

        impl pingora_core::protocols::GetTimingDigest for $ty {
            fn get_timing_digest(&self) -> Vec<Option<pingora_core::protocols::TimingDigest>> {
                pingora_core::protocols::GetTimingDigest::get_timing_digest(&*self.$inner)
            }

            fn get_read_pending_time(&self) -> std::time::Duration {
                pingora_core::protocols::GetTimingDigest::get_read_pending_time(&*self.$inner)
            }

            fn get_write_pending_time(&self) -> std::time::Duration {
                pingora_core::protocols::GetTimingDigest::get_write_pending_time(&*self.$inner)
            }
        }

        impl pingora_core::protocols::GetProxyDigest for $ty {
            fn get_proxy_digest(
                &self,
            ) -> Option<std::sync::Arc<pingora_core::protocols::raw_connect::ProxyDigest>> {
                pingora_core::protocols::GetProxyDigest::get_proxy_digest(&*self.$inner)
            }
        }

        impl pingora_core::protocols::GetSocketDigest for $ty {
            fn get_socket_digest(
                &self,
            ) -> Option<std::sync::Arc<pingora_core::protocols::SocketDigest>> {
                pingora_core::protocols::GetSocketDigest::get_socket_digest(&*self.$inner)
            }
        }
    };
}
