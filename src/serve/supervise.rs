//! Listeners bound once, and a process that does not outlive its services.
//!
//! pingora binds a service's listener when the service starts, in the service's own thread; while
//! the port is taken it retries 30 times a second apart, then panics in that thread — and the
//! process lived on, `/healthz` and `/readyz` answering 200, with nothing serving the site.
//! robogate binds every listener itself before pingora starts, holding them all at once (so two
//! listeners that cannot coexist are caught there, with a message naming both), and hands each
//! socket to its service, which adopts it the way pingora adopts the sockets handed over in a
//! graceful upgrade: nothing is bound twice, so no other process can take a port between the
//! check and the bind. And a service that fails (panics) or stops before the shutdown ends the
//! process with an error rather than leaving it up and looking healthy.

use std::any::Any;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::os::fd::IntoRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use async_trait::async_trait;
use pingora_core::server::{ListenFds, RuntimeOpts, ShutdownWatch};
use pingora_core::services::{ServiceReadyNotifier, ServiceWithDependents};

/// A listening socket robogate bound for the setting `what`.
#[derive(Debug)]
pub struct Listener {
    pub what: &'static str,
    pub addr: SocketAddr,
    socket: TcpListener,
}

impl Listener {
    /// The address as the service is given it (`add_tcp`, `ListenerConfig::tcp`): pingora
    /// looks its sockets up by this text, so it is the bound address (two listeners on port 0
    /// would otherwise share the key `127.0.0.1:0`).
    pub fn key(&self) -> String {
        self.local().to_string()
    }

    /// The address the socket got: the configured one, with the port the system picked for
    /// port 0.
    pub fn local(&self) -> SocketAddr {
        self.socket.local_addr().unwrap_or(self.addr)
    }
}

/// Writes `text` to `path` through a sibling file renamed over it: a reader sees the old file
/// or the whole new one, never a part.
pub fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.new", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    std::fs::write(&partial, text)?;
    std::fs::rename(&partial, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}

/// Binds the listener for the setting `what` while the listeners in `held` stay bound, so that
/// one clashing with another fails here (`0.0.0.0:P` takes port P on `127.0.0.1` too).
pub fn bind(what: &'static str, addr: SocketAddr, held: &[&Listener]) -> Result<Listener, String> {
    let socket = TcpListener::bind(addr)
        .and_then(|socket| socket.set_nonblocking(true).map(|()| socket))
        .map_err(|e| {
            let clash = held.iter().find_map(|other| {
                let bound = other.socket.local_addr().unwrap_or(other.addr);
                (e.kind() == ErrorKind::AddrInUse && bound.port() == addr.port())
                    .then_some((other.what, bound))
            });
            match clash {
                Some((other, bound)) => format!(
                    "cannot listen on {addr} ({what}): {e}: {other} {bound} takes that port; \
                     give {what} another one"
                ),
                None => format!("cannot listen on {addr} ({what}): {e}"),
            }
        })?;
    Ok(Listener { what, addr, socket })
}

/// What to do when a service fails: given why, it ends the process.
pub type OnFailure = Arc<dyn Fn(String) + Send + Sync>;

/// A pingora service that starts on the sockets robogate bound for it and reports, through
/// `failed`, a panic or a stop before the shutdown.
pub struct Supervised<S> {
    inner: S,
    sockets: Vec<(String, TcpListener)>,
    failed: OnFailure,
}

impl<S> Supervised<S> {
    pub fn new(inner: S, listeners: Vec<Listener>, failed: OnFailure) -> Supervised<S> {
        let sockets = listeners.into_iter().map(|l| (l.key(), l.socket)).collect();
        Supervised {
            inner,
            sockets,
            failed,
        }
    }
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

#[async_trait]
impl<S: ServiceWithDependents> ServiceWithDependents for Supervised<S> {
    async fn start_service(
        &mut self,
        fds: Option<ListenFds>,
        shutdown: ShutdownWatch,
        listeners_per_fd: usize,
        ready_notifier: ServiceReadyNotifier,
    ) {
        let sockets = std::mem::take(&mut self.sockets);
        if let Some(table) = &fds {
            let mut table = table.lock();
            for (key, socket) in sockets {
                table.add(key, socket.into_raw_fd());
            }
        } // else the sockets close here, and pingora binds its own.
        let stopping = shutdown.clone();
        let name = self.inner.name().to_string();
        let mut run = self
            .inner
            .start_service(fds, shutdown, listeners_per_fd, ready_notifier);
        let panicked = std::future::poll_fn(|cx| {
            match catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(())) => Poll::Ready(None),
                Err(payload) => Poll::Ready(Some(payload)),
            }
        })
        .await;
        let why = match panicked {
            Some(payload) => panic_message(&*payload),
            // Stopping: told to (SIGTERM), or the server is gone (SIGINT never tells).
            None if *stopping.borrow() || stopping.has_changed().is_err() => return,
            None => "stopped before the shutdown".to_string(),
        };
        (self.failed)(format!("service '{name}' failed: {why}"));
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn threads(&self) -> Option<usize> {
        self.inner.threads()
    }

    fn runtime_opts_override(&self, global: &RuntimeOpts) -> Option<RuntimeOpts> {
        self.inner.runtime_opts_override(global)
    }

    fn on_startup_delay(&self, time_waited: Duration) {
        self.inner.on_startup_delay(time_waited)
    }

    fn listen_addresses(&self) -> Option<Vec<String>> {
        self.inner.listen_addresses()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admin::Admin;
    use pingora_core::services::listening::Service;

    #[test]
    fn listeners_that_clash_are_caught_while_both_are_held() {
        let public = bind("server.listen", "0.0.0.0:0".parse().unwrap(), &[]).unwrap();
        let port = public.socket.local_addr().unwrap().port();
        let admin: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let err = bind("admin.listen", admin, &[&public]).unwrap_err();
        assert!(
            err.starts_with(&format!("cannot listen on {admin} (admin.listen): "))
                && err.contains(&format!("server.listen 0.0.0.0:{port} takes that port")),
            "{err}"
        );
    }

    /// Runs the admin service, listening on `address`, supervised until it ends: `server_gone`
    /// drops the shutdown watch's sender first (as a SIGINT does). Returns the failure reported.
    fn run_supervised(address: &str, server_gone: bool) -> Option<String> {
        let mut admin = Service::new("robogate admin".to_string(), Admin::default());
        admin.add_tcp(address);
        let (report, reported) = std::sync::mpsc::channel();
        let failed: OnFailure = Arc::new(move |why| report.send(why).unwrap());
        let mut service = Supervised::new(admin, Vec::new(), failed);
        let (server, shutdown) = tokio::sync::watch::channel(false);
        let _server = (!server_gone).then_some(server); // `None`: the sender is dropped here
        let (ready, _) = tokio::sync::watch::channel(false);
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(service.start_service(None, shutdown, 1, ServiceReadyNotifier::new(ready)));
        reported.try_recv().ok()
    }

    /// SIGINT stops the runtimes without telling the services to stop: a listener's accept
    /// loop ends when the server (the sender of the shutdown watch) is gone. Not a failure.
    #[test]
    fn a_service_that_ends_with_its_server_is_not_a_failure() {
        assert_eq!(run_supervised("127.0.0.1:0", true), None);
    }

    /// The path pingora takes when a listener cannot be bound (its `expect` on building the
    /// listeners panics in the service): the panic is reported, not left in a dead thread.
    #[test]
    fn a_service_that_cannot_start_its_listener_is_reported() {
        let why = run_supervised("no address at all", false).expect("the failure is reported");
        assert!(
            why.starts_with("service 'robogate admin' failed: Failed to build listeners"),
            "{why}"
        );
    }
}
