//! TEMPORARY STUB — replaced by the classifier helper's implementation (issue 4).
use std::path::PathBuf;
use std::process::ExitCode;

use crate::classify::Catalog;

#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    #[arg(long)]
    pub file: Option<PathBuf>,
    #[arg(long)]
    pub agents: Option<PathBuf>,
    #[arg(long)]
    pub summary: bool,
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn run(_args: &ClassifyArgs, _catalog: Catalog) -> std::io::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
