use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    robogate::cli::run(robogate::cli::Cli::parse())
}
