//! Requests in flight, counted for a graceful stop (`serve::drain` exits once none is left).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Requests being processed (from the parsed head to the last byte written).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// One request in flight, for as long as this lives.
#[derive(Debug)]
pub struct InFlight(());

impl InFlight {
    pub fn enter() -> InFlight {
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How many requests are in flight now.
pub fn in_flight() -> usize {
    IN_FLIGHT.load(Ordering::Acquire)
}
