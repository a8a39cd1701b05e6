//! The one way out of `robogate serve`. However the process ends — drained after SIGTERM, at the
//! end of the grace period, on SIGINT, or because a service failed — it leaves through
//! [`Exit::now`], which writes out the log lines still queued before the process goes.

use std::sync::Mutex;

use tracing_appender::non_blocking::WorkerGuard;

/// What has to happen before the process ends.
pub struct Exit {
    /// The log writer's flush guard: dropping it writes out every queued line.
    logs: Mutex<Option<WorkerGuard>>,
}

impl Exit {
    pub fn new(logs: WorkerGuard) -> Exit {
        Exit {
            logs: Mutex::new(Some(logs)),
        }
    }

    /// Writes out the queued log lines (once; later calls do nothing).
    pub fn flush_logs(&self) {
        let guard = match self.logs.lock() {
            Ok(mut logs) => logs.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        drop(guard);
    }

    /// Ends the process with `code` (from any thread), after writing out the log.
    pub fn now(&self, code: i32) -> ! {
        self.flush_logs();
        std::process::exit(code)
    }
}
