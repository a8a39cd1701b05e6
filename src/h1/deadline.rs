//! Timeouts for a connection's reads and writes that cost nothing while its I/O is quick.
//!
//! A connection robogate drives itself (a client's on the lane, an origin's on the direct lane,
//! kept with it in the pool) has one [`Deadline`]: one tokio timer for the connection's whole
//! life, made the first time a wait has to sleep. A read or write that is ready when first
//! polled never touches it. A wait that sleeps re-arms the timer only when it would fire too
//! late for this wait; a timer armed earlier for a sooner time fires early, and the wait then
//! re-arms it for its own time. So a keep-alive connection busy with requests re-arms its timer
//! about once per timeout, not once per wait. pingora's `fast_timeout`, used before, registered
//! every wait that slept in a table behind a lock: about 2,000 instructions a request
//! (BENCHMARKS.md, "Stop 26").

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// A connection's timer (see the module's comment).
#[derive(Default)]
pub struct Deadline {
    /// Made by the first wait that sleeps, on that wait's runtime.
    sleep: Option<Pin<Box<Sleep>>>,
}

/// A wait ran past its time.
#[derive(Debug, PartialEq, Eq)]
pub struct TimedOut;

impl Deadline {
    /// Runs `io` to its end, or fails once it has waited `wait` (counted from its first poll
    /// that did not finish it).
    pub async fn within<F: Future>(
        &mut self,
        wait: Duration,
        io: F,
    ) -> Result<F::Output, TimedOut> {
        let mut io = pin!(io);
        let mut due = None;
        poll_fn(|cx| {
            if let Poll::Ready(out) = io.as_mut().poll(cx) {
                return Poll::Ready(Ok(out));
            }
            let due = *due.get_or_insert_with(|| later(wait));
            self.poll_due(due, cx).map(|()| Err(TimedOut))
        })
        .await
    }

    /// Ready once `due` has passed; until then the timer wakes this task no later than `due`.
    fn poll_due(&mut self, due: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if sleep.deadline() > due {
            sleep.as_mut().reset(due);
        }
        loop {
            ready!(sleep.as_mut().poll(cx));
            if Instant::now() >= due {
                return Poll::Ready(());
            }
            // Armed by an earlier wait for a sooner time.
            sleep.as_mut().reset(due);
        }
    }
}

/// `wait` from now; a wait too long to add (a year or more) is as good as never.
fn later(wait: Duration) -> Instant {
    const NEVER: Duration = Duration::from_secs(365 * 24 * 3600);
    Instant::now() + wait.min(NEVER)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paused clock: the waits below advance it, so the tests take no real time.
    fn paused() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
    }

    #[test]
    fn a_ready_wait_never_makes_the_timer() {
        paused().block_on(async {
            let mut deadline = Deadline::default();
            let out = deadline.within(Duration::from_secs(1), async { 7 }).await;
            assert_eq!(out, Ok(7));
            assert!(deadline.sleep.is_none());
        });
    }

    #[test]
    fn a_wait_that_runs_past_its_time_times_out_at_that_time() {
        paused().block_on(async {
            let mut deadline = Deadline::default();
            let start = Instant::now();
            let out = deadline
                .within(Duration::from_secs(5), std::future::pending::<()>())
                .await;
            assert_eq!(out, Err(TimedOut));
            assert_eq!(start.elapsed(), Duration::from_secs(5));
        });
    }

    #[test]
    fn a_wait_that_ends_in_time_gives_its_output() {
        paused().block_on(async {
            let mut deadline = Deadline::default();
            let io = async {
                tokio::time::sleep(Duration::from_secs(4)).await;
                "done"
            };
            assert_eq!(
                deadline.within(Duration::from_secs(5), io).await,
                Ok("done")
            );
        });
    }

    /// Whatever time the timer was armed for by the waits before, each wait ends at its own:
    /// a shorter wait after a longer one re-arms it sooner, and a longer wait after a shorter
    /// one waits on when it fires early.
    #[test]
    fn each_wait_gets_its_own_time_whatever_the_timer_was_armed_for() {
        paused().block_on(async {
            let mut deadline = Deadline::default();
            let quick = || tokio::time::sleep(Duration::from_secs(1));
            let never = std::future::pending::<()>;
            let mut timed = async |wait: u64, io: Pin<Box<dyn Future<Output = ()>>>| {
                let start = Instant::now();
                let out = deadline.within(Duration::from_secs(wait), io).await;
                (out, start.elapsed().as_secs())
            };
            // Armed for t=10; the next wait's time, t=4, is sooner.
            assert_eq!(timed(10, Box::pin(quick())).await, (Ok(()), 1));
            assert_eq!(timed(3, Box::pin(never())).await, (Err(TimedOut), 3));
            // Armed for t=6; the next wait's time, t=15, is later: the timer fires early.
            assert_eq!(timed(2, Box::pin(quick())).await, (Ok(()), 1));
            assert_eq!(timed(10, Box::pin(never())).await, (Err(TimedOut), 10));
        });
    }

    #[test]
    fn a_wait_of_years_does_not_overflow() {
        paused().block_on(async {
            let mut deadline = Deadline::default();
            let io = async {
                tokio::time::sleep(Duration::from_secs(1)).await;
            };
            assert_eq!(deadline.within(Duration::MAX, io).await, Ok(()));
        });
    }
}
