//! `robogate state check`: whether the shared state backend `[state]` names answers, and how
//! fast.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::config::StateBackend;
use crate::state::shared::Shared;

/// Work with the live-state backend.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum StateCommand {
    /// Connect to the backend `[state]` names and measure its round trip.
    Check {
        #[arg(long, short, default_value = "conf/robogate.toml")]
        config: PathBuf,
    },
}

pub fn run(command: &StateCommand) -> ExitCode {
    let StateCommand::Check { config } = command;
    let loaded = match crate::reload::load(config, 1) {
        Ok(loaded) => loaded,
        Err(errors) => {
            eprintln!("{errors}");
            return ExitCode::from(2);
        }
    };
    let StateBackend::Redis(redis) = &loaded.settings.state else {
        println!("state.backend = \"local\": live state is kept in each robogate process; nothing to check");
        return ExitCode::SUCCESS;
    };
    let shown = redis.shown();
    let shared = match Shared::new(redis.clone()) {
        Ok(shared) => shared,
        Err(e) => {
            println!("{shown}: down ({e})");
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("robogate state check: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(shared.health(20)) {
        Ok(health) => {
            let us = |d: Duration| d.as_micros();
            let p50 = health.pings[health.pings.len() / 2];
            let max = health.pings[health.pings.len() - 1];
            println!(
                "{shown}: up ({}), {} PINGs: p50 {} µs, max {} µs; state.timeout is {:?}{}",
                health
                    .version
                    .map_or_else(|| "version unknown".to_owned(), |v| format!("server {v}")),
                health.pings.len(),
                us(p50),
                us(max),
                redis.timeout,
                if max > redis.timeout {
                    " — slower than state.timeout: requests would use local state"
                } else {
                    ""
                }
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{shown}: down ({e}); robogate would serve with each instance's own state");
            ExitCode::from(1)
        }
    }
}
