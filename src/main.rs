use std::process::ExitCode;

use clap::Parser;

/// mimalloc: measured +6% proxy throughput (0.73 -> 0.79x nginx) over the system allocator (see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    robogate::cli::run(robogate::cli::Cli::parse())
}
