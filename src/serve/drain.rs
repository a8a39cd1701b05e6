//! A graceful stop that ends when the work does. After SIGTERM pingora stops accepting, lets
//! requests in flight finish, and then sleeps out the whole `server.grace_period` even when
//! nothing is left to do. robogate counts its requests in flight and exits as soon as there are
//! none (at most the grace period later, as before), the way nginx's graceful quit does. When the
//! grace period runs out first, pingora stops its runtimes, which drops the requests still in
//! flight (each is logged as cut, see `proxy::RequestCtx`), and `serve` returns: the drain steps
//! aside then rather than race it to the exit.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use pingora_core::server::ExecutionPhase;
use tokio::sync::broadcast::{
    self,
    error::{RecvError, TryRecvError},
};

use super::exit::Exit;
use crate::proxy::in_flight::in_flight;

/// How often the drain looks at the count once the grace period has begun.
const POLL: Duration = Duration::from_millis(10);

/// Watches pingora's phases; once its grace period starts, exits the process as soon as no
/// request has been in flight for two looks in a row (a request whose head was already read
/// when the listener stopped is still counted a moment later), unless the grace period ends
/// first.
pub fn exit_when_drained(
    mut phases: broadcast::Receiver<ExecutionPhase>,
    exit: Arc<Exit>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("robogate drain".into())
        .spawn(move || {
            loop {
                match phases.blocking_recv() {
                    Ok(ExecutionPhase::ShutdownGracePeriod) => break,
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                }
            }
            let mut idle_looks = 0;
            while idle_looks < 2 {
                std::thread::sleep(POLL);
                // Sent before the runtimes drop what is still in flight: seen here before the
                // count those drops bring to zero has been looked at twice.
                loop {
                    match phases.try_recv() {
                        Ok(ExecutionPhase::ShutdownRuntimes | ExecutionPhase::Terminated)
                        | Err(TryRecvError::Closed) => return,
                        Ok(_) | Err(TryRecvError::Lagged(_)) => {}
                        Err(TryRecvError::Empty) => break,
                    }
                }
                idle_looks = if in_flight() == 0 { idle_looks + 1 } else { 0 };
            }
            tracing::info!("no request in flight: exiting before the grace period ends");
            exit.now(0);
        })
}

/// Waits (at most `max`) until no request is counted in flight: once pingora has stopped its
/// runtimes, until their worker threads have dropped the requests that were cut (which logs
/// them), so that their lines are queued before the log is flushed. SIGINT stops the runtimes
/// without waiting for those threads.
pub fn settle(max: Duration) {
    let start = std::time::Instant::now();
    while in_flight() > 0 && start.elapsed() < max {
        std::thread::sleep(Duration::from_millis(1));
    }
}
