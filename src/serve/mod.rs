//! The serve wing: `robogate serve` loads the policy, builds the pingora server (proxy, admin,
//! reloader), runs it, and stops it gracefully ([`drain`]) through one way out ([`exit`]), with
//! every listener bound up front and every service supervised ([`supervise`]).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use pingora_core::apps::HttpServerOptions;
use pingora_core::listeners::ListenerConfig;
use pingora_core::protocols::l4::stream::L4BufferSettings;
use pingora_core::server::configuration::ServerConf;
use pingora_core::server::{RunArgs, Server};
use pingora_core::services::background::background_service;
use pingora_core::services::listening::Service;

use crate::access_log;
use crate::admin::Admin;
use crate::config::{self, Live, Settings};
use crate::proxy::forward::PoolSweeper;
use crate::proxy::Gate;
use crate::reload::{self, Reloader};
use exit::Exit;
use supervise::{OnFailure, Supervised};

pub mod drain;
pub mod exit;
pub mod redirect;
pub mod supervise;
pub mod tls;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Read buffer of each client connection. pingora's default (64 KiB) dominates the memory of
/// an idle or tarpitted connection; requests through robogate are small.
pub const CLIENT_READ_BUFFER: usize = 0;

/// Write buffer of each client connection: a response head and a small body leave in one
/// `send` when both fit (pingora's default, 1460 bytes, sends them separately).
pub const CLIENT_WRITE_BUFFER: usize = 8192;

/// How often the conf files are re-checked even without a file event.
pub const RECHECK_INTERVAL: Duration = Duration::from_secs(30);

/// Sets up `tracing` (with pingora's `log` output bridged into it) and the access log: one
/// writer thread (`access_log::writer`) writes both to stdout, so lines never interleave
/// mid-line; `[access_log]` is applied once the config is read ([`access_log::configure`]). The
/// returned writer is flushed by [`Exit::finish`].
fn init_logging(format: LogFormat) -> std::io::Result<Arc<access_log::Writer>> {
    let lines = access_log::install(matches!(format, LogFormat::Json))?;
    let writer = lines.0.clone();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(lines)
        .with_ansi(false);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    let _ = tracing_log::LogTracer::init();
    Ok(writer)
}

fn server_conf(settings: &Settings) -> ServerConf {
    // pingora writes its pid file only when it daemonizes, which robogate never asks it to do
    // (robogate writes server.pid_file itself). The upgrade socket, where SIGQUIT hands the
    // listeners over, goes next to the pid file, or in the temp dir under this process's id:
    // pingora's defaults in /tmp collide between pingora programs.
    let pid = settings
        .pid_file
        .clone()
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("robogate-{}.pid", std::process::id()))
        })
        .display()
        .to_string();
    ServerConf {
        threads: settings.threads,
        // One thread has no one to steal from: a current-thread runtime drives it without the
        // work-stealing scheduler's cross-thread bookkeeping (3–5% less CPU a request,
        // BENCHMARKS.md "Stop 22"). With more threads, stealing keeps a busy connection from
        // stalling the others that landed on its thread.
        work_stealing: settings.threads > 1,
        grace_period_seconds: Some(settings.grace_period.as_secs()),
        graceful_shutdown_timeout_seconds: Some(1),
        upgrade_sock: format!("{pid}.upgrade.sock"),
        pid_file: pid,
        ..ServerConf::default()
    }
}

/// Opens `[evidence] file`, if set: a log that cannot be opened stops the start.
fn open_evidence(
    settings: &config::EvidenceSettings,
) -> Result<Option<Arc<crate::evidence::EvidenceLog>>, String> {
    let Some(file) = &settings.file else {
        return Ok(None);
    };
    let options = crate::evidence::Options {
        max_bytes: settings.max_bytes,
        keep: settings.keep,
        queue: settings.queue,
        ..crate::evidence::Options::new(file.clone())
    };
    crate::evidence::EvidenceLog::open(options)
        .map(|log| Some(Arc::new(log)))
        .map_err(|e| format!("cannot open evidence.file {}: {e}", file.display()))
}

/// Runs the proxy until SIGTERM (graceful) or SIGINT (fast).
pub fn serve(config_path: &Path, log_format: LogFormat, ports_file: Option<&Path>) -> ExitCode {
    let logs = match init_logging(log_format) {
        Ok(logs) => logs,
        Err(e) => {
            eprintln!("robogate: not starting: cannot start the log writer: {e}");
            return ExitCode::from(1);
        }
    };
    let exit = Arc::new(Exit::new(logs));
    let loaded = match crate::reload::load(config_path, 1) {
        Ok(l) => l,
        Err(errors) => {
            eprintln!("{errors}");
            eprintln!(
                "robogate: not starting: {} configuration problem(s)",
                errors.0.len()
            );
            return ExitCode::from(1);
        }
    };
    for w in loaded.to_log() {
        tracing::warn!(target: "reload", "{w}");
    }
    reload::record_live(&loaded);
    let settings = loaded.settings;
    // Listeners bound here, both held at once, and handed to pingora's services (which never
    // bind); then the pid file.
    let started = (|| {
        let public = supervise::bind("server.listen", settings.listen, &[])?;
        let admin = supervise::bind("admin.listen", settings.admin_listen, &[&public])?;
        let secure = match settings.tls_listen {
            Some(addr) => Some(supervise::bind(
                "server.tls_listen",
                addr,
                &[&public, &admin],
            )?),
            None => None,
        };
        let decide = match settings.decide_listen {
            Some(addr) => {
                let others: Vec<&supervise::Listener> =
                    [Some(&public), Some(&admin), secure.as_ref()]
                        .into_iter()
                        .flatten()
                        .collect();
                Some(supervise::bind("decide.listen", addr, &others)?)
            }
            None => None,
        };
        if let Some(path) = &settings.pid_file {
            exit.write_pid_file(path)?;
        }
        let bound: Vec<&supervise::Listener> = [
            Some(&public),
            Some(&admin),
            secure.as_ref(),
            decide.as_ref(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let lines: String = bound
            .iter()
            .map(|l| format!("{} = \"{}\"\n", l.what, l.local()))
            .collect();
        tracing::info!("listening: {}", lines.trim_end().replace('\n', ", "));
        if let Some(path) = ports_file {
            supervise::write_atomically(path, &lines)
                .map_err(|e| format!("cannot write --ports-file {}: {e}", path.display()))?;
        }
        Ok::<_, String>((public, admin, secure, decide))
    })();
    let (public, admin_listener, secure, decide_listener) = match started {
        Ok(listeners) => listeners,
        Err(message) => {
            eprintln!("robogate: {message}");
            return ExitCode::from(1);
        }
    };
    let evidence = match open_evidence(&settings.evidence) {
        Ok(log) => log,
        Err(message) => {
            eprintln!("robogate: {message}");
            exit.finish();
            return ExitCode::from(1);
        }
    };
    if let Some(log) = &evidence {
        exit.close_at_exit(log.clone());
    }
    if let Err(message) = access_log::configure(&settings.access_log) {
        eprintln!("robogate: {message}");
        exit.finish();
        return ExitCode::from(1);
    }
    let failed: OnFailure = {
        let exit = exit.clone();
        Arc::new(move |why: String| {
            tracing::error!("{why}: exiting");
            eprintln!("robogate: {why}: exiting");
            exit.now(1)
        })
    };
    reload::mark_success(loaded.policy.generation);
    let certs = match (&secure, loaded.certs.clone()) {
        (Some(_), Some(set)) => Some(tls::server_certs(set, settings.tls_min_version)),
        _ => None,
    };
    reload::store_certs(None, loaded.certs.clone());
    let live = Arc::new(ArcSwap::from_pointee(Live {
        policy: loaded.policy,
        upstream: loaded.upstream,
    }));
    crate::alloc::release_freed_memory();

    let ready = Arc::new(AtomicBool::new(false));

    let mut server = Server::new_with_opt_and_conf(None, server_conf(&settings));
    server.bootstrap();

    let shared = Arc::new(settings.clone());
    let gate = Gate::new(live.clone(), shared, evidence);
    let sweeper = background_service(
        "robogate origin pool",
        PoolSweeper {
            pool: gate.origins(),
            live: live.clone(),
        },
    );
    let state = gate.live_state();
    let ban_gauge = background_service(
        "robogate trap bans",
        crate::proxy::BanGauge {
            state: state.clone(),
        },
    );
    let key_warmer = background_service(
        "robogate key directories",
        crate::proxy::KeyWarmer {
            verifier: gate.verifier(),
            live: live.clone(),
        },
    );
    let state_link = background_service(
        "robogate state link",
        crate::proxy::StateLink {
            state: state.clone(),
        },
    );
    let app = |gate: Gate| {
        let mut http = pingora_proxy::http_proxy(&server.configuration, gate.clone());
        let mut options = HttpServerOptions::default();
        options.keepalive_request_limit = Some(settings.keepalive_request_limit());
        // HTTP/2 connections close after `server.keepalive_timeout` without a stream, as
        // HTTP/1.1 ones do between requests (cold-try finding: idle h2 connections stayed open
        // for good).
        options.h2_idle_timeout = Some(settings.keepalive_timeout);
        http.server_options = Some(options);
        crate::proxy::app::App::new(http, gate)
    };
    // `[decide] listen`: the same gate (policy, state, verifier, logs), answering subrequests.
    let decider =
        decide_listener.map(|listener| {
            let mut service =
                Service::new("robogate decide".to_string(), app(gate.for_subrequests()));
            service.add_listener(ListenerConfig::tcp(listener.key()).l4_buffer(
                L4BufferSettings::new(CLIENT_READ_BUFFER, CLIENT_WRITE_BUFFER),
            ));
            (service, listener)
        });
    let mut proxy = Service::new("robogate proxy".to_string(), app(gate));
    // server.tls_redirect: the plain listener gets the redirecting app, not the proxy.
    let redirect_to = match (&secure, &certs) {
        (Some(s), Some(_)) if settings.tls_redirect => Some(s.local().port()),
        _ => None,
    };
    let mut proxy_listeners = Vec::new();
    let mut redirect = None;
    match redirect_to {
        Some(port) => {
            let mut service = Service::new(
                "robogate https redirect".to_string(),
                redirect::ToHttps { port },
            );
            service.add_tcp(&public.key());
            redirect = Some((service, public));
        }
        None => {
            proxy.add_listener(
                ListenerConfig::tcp(public.key()).l4_buffer(L4BufferSettings::new(
                    CLIENT_READ_BUFFER,
                    CLIENT_WRITE_BUFFER,
                )),
            );
            proxy_listeners.push(public);
        }
    }
    if let (Some(secure), Some(certs)) = (secure, &certs) {
        proxy.add_listener(
            ListenerConfig::tcp(secure.key())
                .tls(tls::settings(certs.clone()))
                .l4_buffer(L4BufferSettings::new(
                    CLIENT_READ_BUFFER,
                    CLIENT_WRITE_BUFFER,
                )),
        );
        proxy
            .endpoints()
            .set_pre_tls_callback(Arc::new(tls::HandshakeStarted {
                timeout: settings.head_timeout,
            }));
        proxy_listeners.push(secure);
    }

    let mut admin = Service::new(
        "robogate admin".to_string(),
        Admin::new(
            ready.clone(),
            Some(state),
            Some(live.clone()),
            settings.admin_token.clone(),
        ),
    );
    admin.add_tcp(&admin_listener.key());

    let reloader = background_service(
        "robogate reload",
        Reloader {
            config_path: config_path.to_path_buf(),
            live,
            running: settings.clone(),
            files: loaded.files,
            memo: loaded.memo,
            interval: RECHECK_INTERVAL,
            ready,
            certs,
        },
    );

    server.add_service(Supervised::new(proxy, proxy_listeners, failed.clone()));
    if let Some((service, listener)) = redirect {
        server.add_service(Supervised::new(service, vec![listener], failed.clone()));
    }
    if let Some((service, listener)) = decider {
        server.add_service(Supervised::new(service, vec![listener], failed.clone()));
    }
    server.add_service(Supervised::new(admin, vec![admin_listener], failed.clone()));
    server.add_service(Supervised::new(reloader, Vec::new(), failed.clone()));
    server.add_service(Supervised::new(sweeper, Vec::new(), failed.clone()));
    server.add_service(Supervised::new(ban_gauge, Vec::new(), failed.clone()));
    server.add_service(Supervised::new(key_warmer, Vec::new(), failed.clone()));
    server.add_service(Supervised::new(state_link, Vec::new(), failed));
    tracing::info!(
        listen = %settings.listen,
        admin = %settings.admin_listen,
        tls = ?settings.tls_listen,
        decide = ?settings.decide_listen,
        config = %config_path.display(),
        "robogate starting"
    );
    if let Err(e) = drain::exit_when_drained(server.watch_execution_phase(), exit.clone()) {
        // Without it a stop just takes the whole grace period.
        tracing::warn!("cannot start the drain watcher: {e}");
    }
    server.run(RunArgs::default());
    drain::settle(Duration::from_millis(200));
    exit.finish();
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of a minimal config with `[server] threads = threads`.
    fn settings(threads: usize) -> Settings {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("robots.txt"), "User-agent: *\nDisallow:\n").unwrap();
        let conf = dir.path().join("robogate.toml");
        std::fs::write(
            &conf,
            format!("[server]\nthreads = {threads}\n[origin]\naddress = \"127.0.0.1:1\"\n"),
        )
        .unwrap();
        crate::reload::load(&conf, 1).unwrap().settings
    }

    #[test]
    fn one_thread_runs_without_work_stealing_and_more_threads_steal() {
        let one = server_conf(&settings(1));
        assert_eq!((one.threads, one.work_stealing), (1, false));
        let two = server_conf(&settings(2));
        assert_eq!((two.threads, two.work_stealing), (2, true));
    }
}
