//! The command line: `serve` (the default), `check`, `lint`, `classify`, `config check`,
//! `verify`, `ranges update`, `report`, `audit`, `state check`, `health`.
//! robogate owns argv; pingora never parses it.

pub mod audit;
mod charges;
pub mod check;
pub mod classify;
pub mod health;
mod inputs;
pub mod lint;
pub mod ranges;
pub mod report;
pub mod state;
mod tls;
pub mod verify;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::serve::{self, LogFormat};

/// robogate: a reverse proxy that makes robots.txt mean something.
#[derive(Debug, Parser)]
#[command(
    name = "robogate",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the proxy (the default when no subcommand is given).
    Serve(ServeArgs),
    /// Work with the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Show what robots.txt (or the whole live policy) decides for a User-Agent and paths.
    Check(check::CheckArgs),
    /// Warn about every questionable line of a robots.txt, with a fix for each.
    Lint(lint::LintArgs),
    /// Classify User-Agent strings (one per line) as browser, robot or unknown.
    Classify(classify::ClassifyArgs),
    /// Check a client's claimed identity: which published proof is tried and what it says.
    Verify(verify::VerifyArgs),
    /// Work with the published IP-range lists that prove crawler identities.
    Ranges(ranges::RangesArgs),
    /// Summarise the access log per robot: requests, robots.txt fetches, refusals, graces.
    Report(report::ReportArgs),
    /// Tell what robogate would have done to the requests in other servers' access logs
    /// (nginx, Apache, JSON lines, robogate's own), without a running proxy.
    Audit(audit::AuditArgs),
    /// Work with the live-state backend (`[state]`).
    #[command(subcommand)]
    State(state::StateCommand),
    /// Ask a running robogate whether it is alive (its admin listener's `/healthz`): exit 0
    /// when it is (for a container's HEALTHCHECK).
    Health(health::HealthArgs),
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Load and compile every file the config names; print every problem as file:line: key: message.
    Check {
        #[arg(long, short, default_value = "conf/robogate.toml")]
        config: PathBuf,
    },
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The configuration file; the files it names are relative to its folder.
    #[arg(long, short, default_value = "conf/robogate.toml")]
    pub config: PathBuf,
    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Once the listeners are bound, write the address each got here (`server.listen =
    /// "127.0.0.1:40123"`, one line per listener), replacing the file at once: with port 0 in
    /// the config, this says which ports the system picked.
    #[arg(long, value_name = "FILE")]
    pub ports_file: Option<PathBuf>,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> ExitCode {
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    if !matches!(command, Command::Serve(_)) {
        end_quietly_on_a_closed_pipe();
    }
    match command {
        Command::Serve(args) => {
            serve::serve(&args.config, args.log_format, args.ports_file.as_deref())
        }
        Command::Config(ConfigCommand::Check { config }) => config_check(&config),
        Command::Check(args) => check::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Ranges(args) => ranges::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Audit(args) => audit::run(&args),
        Command::State(command) => state::run(&command),
        Command::Health(args) => health::run(&args),
        Command::Classify(args) => classify::run(&args).unwrap_or_else(|e| {
            eprintln!("robogate classify: {e}");
            ExitCode::from(2)
        }),
    }
}

/// Output into a pipe whose reader has gone (`robogate lint FILE | head -1`) ends the command at
/// once and silently, as it ends `cat` or `grep`: the default action of SIGPIPE, which the Rust
/// runtime sets to "ignore" (every `println!` would then panic on EPIPE). Only for the one-shot
/// commands: `serve` keeps ignoring it, since a client that hangs up must cost one connection,
/// not the process. Sockets are unaffected: the standard library sends with `MSG_NOSIGNAL`.
fn end_quietly_on_a_closed_pipe() {
    // SAFETY: sets the disposition of one signal to its default; no handler, no pointers.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn config_check(path: &Path) -> ExitCode {
    match crate::reload::load(path, 1) {
        Ok(loaded) => {
            let p = &loaded.policy;
            // `loaded.disagreements` is left out: the lint findings below explain those lines.
            for w in &loaded.warnings {
                println!("warning: {w}");
            }
            if let Some(why) = &loaded.robots_fetch_failure {
                eprintln!(
                    "{}: robots.source: the origin's robots.txt could not be fetched from {} ({why}): \
                     robots treat the site as disallowed; robogate would serve a complete-disallow \
                     robots.txt with status 503 until the origin answers",
                    path.display(),
                    loaded.upstream.address,
                );
                eprintln!("1 problem(s) found");
                return ExitCode::from(1);
            }
            for w in crate::config::lint_robots(&p.robots.body, &p.classifier) {
                let not_enforced = if w.readings_differ() {
                    " (not enforced as written: robogate enforces only what both readings disallow)"
                } else {
                    ""
                };
                let served = match &loaded.robots_file {
                    Some(file) => file.display().to_string(),
                    None if loaded.memo.origin.is_some() => "the origin's robots.txt".into(),
                    None => "the generated robots.txt".into(),
                };
                println!("warning: {served}: {w}{not_enforced}");
            }
            tls::print(&loaded);
            let v = &p.verify;
            let lists = v.ranges.lists();
            println!(
                "verify: {} ({} published IP-range lists, {} prefixes, newest {}; {} Web Bot Auth signers; timeout {:?}; spoofed claims: {})",
                if v.enabled { "on" } else { "off" },
                lists.len(),
                lists.iter().map(|l| l.prefixes).sum::<usize>(),
                lists
                    .iter()
                    .filter_map(|l| l.creation_time.as_deref())
                    .max()
                    .unwrap_or("-"),
                v.signature_agents.len(),
                v.timeout,
                v.spoofed,
            );
            println!("{}", fingerprint_line(p, &loaded.settings));
            let browsers = p.classifier.browsers();
            let built_in = crate::classify::BrowserList::builtin().len();
            if browsers.file() != crate::classify::BROWSERS_FILE && browsers.len() < built_in {
                println!(
                    "warning: agents.browsers: {} names {} families, the built-in list {}: the file \
                     replaces the list, so a browser product it lacks makes its string a robot \
                     (start from a copy of conf/browsers.toml and add to it)",
                    browsers.file(),
                    browsers.len(),
                    built_in
                );
            }
            let decide = loaded
                .settings
                .decide_listen
                .map_or(String::new(), |d| format!(", decide {d}"));
            println!(
                "{}: ok (listen {}, admin {}{decide}, origin {}, robots.txt {} bytes, {} catalog agents, {} browser families, enforce mode {})",
                path.display(),
                loaded.settings.listen,
                loaded.settings.admin_listen,
                loaded.upstream.address,
                p.robots.body.len(),
                p.classifier.agents().len(),
                browsers.len(),
                p.enforce.mode,
            );
            ExitCode::SUCCESS
        }
        Err(errors) => {
            eprintln!("{errors}");
            eprintln!("{} problem(s) found", errors.0.len());
            ExitCode::from(1)
        }
    }
}

/// `config check`'s line on `[fingerprint]`: what browser claims are checked against here.
fn fingerprint_line(p: &crate::policy::Policy, settings: &crate::config::Settings) -> String {
    let f = &p.fingerprint;
    if !f.enabled {
        return "fingerprint: off (a browser User-Agent is believed)".to_owned();
    }
    let stack = match settings.tls_listen {
        Some(tls) => format!("ClientHello and HTTP/2 preface on the TLS listener {tls}"),
        None => "no TLS listener: request heads only".to_owned(),
    };
    let proxied = match (&f.ja4_header, settings.trusted_proxies.is_empty()) {
        (Some(name), false) => format!("behind server.trusted_proxies: the JA4 in {name}"),
        (None, false) => "behind server.trusted_proxies: heads only (no ja4_header)".to_owned(),
        (_, true) => "no trusted proxies".to_owned(),
    };
    let readers = if f.reader_for.is_zero() {
        "robots.txt readers: not held".to_owned()
    } else {
        let held = humantime::format_duration(f.reader_for);
        format!("robots.txt readers: robots for {held}")
    };
    format!("fingerprint: on ({stack}; {proxied}; {readers})")
}
