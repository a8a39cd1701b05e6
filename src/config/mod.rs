//! Configuration: `raw` reads robogate.toml as written; this module compiles it, with the files it
//! names, into [`Settings`] (fixed for the process) and a [`Policy`] (reloadable). This is the only
//! place untrusted configuration becomes trusted values, and it reports every problem at once.

mod access_log;
mod agents;
mod enforcement;
mod errors;
mod evidence;
mod fairness;
mod fingerprint;
mod license;
mod memo;
pub mod origin;
mod pay_per_crawl;
pub mod raw;
mod read;
mod robots;
mod settings;
mod state;
pub mod tls;
mod trap;
mod upstream;
mod values;
mod verify;

pub use access_log::AccessLogSettings;
pub use errors::{ConfigError, ConfigErrors};
pub use evidence::EvidenceSettings;
pub use memo::{Memo, OriginMemo, OriginState};
pub use origin::ROBOTS_MAX_BYTES;
pub use settings::Settings;
pub use settings::{Upgrades, MAX_HEAD_BYTES_RANGE};
pub use state::{RedisSettings, StateBackend};

use agents::{load_agents, Compiled};
use enforcement::{compile_enforce, compile_tarpit};
use errors::Errors;
use raw::resolve;
pub use read::{read, read_from, OriginRobots, Written};
use settings::compile_settings;
use upstream::compile_upstream;
pub use upstream::{Lookup, Upstream};

pub use robots::{lint as lint_robots, lint_catalog, read_robots, read_robots_file};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::policy::{
    fingerprint, CrawlDelay, Enforcement, Policy, RobotsFile, Tarpit, Verification,
};
use raw::RawConfig;

/// What a load makes live, swapped as one (the one `ArcSwap` of [`crate::reload`]): the policy
/// requests are decided by, and where the requests it lets through go.
pub struct Live {
    pub policy: Policy,
    pub upstream: Upstream,
}

/// The result of a successful load.
pub struct Loaded {
    pub settings: Settings,
    pub policy: Policy,
    /// `[origin]`: the transport's settings.
    pub upstream: Upstream,
    /// Every file the load read (robogate.toml first); their folders are watched for changes.
    pub files: Vec<PathBuf>,
    /// `source = "origin"`: why this load could not fetch the origin's robots.txt (5xx or no
    /// answer), if it could not; the served file is then the last good copy or complete disallow.
    pub robots_fetch_failure: Option<String>,
    /// `source = "file"`: the robots.txt file served (the others serve generated or fetched
    /// text).
    pub robots_file: Option<PathBuf>,
    /// Settings that load but are likely wrong, as `file:line: key: message`; logged when the
    /// policy goes live and printed by `config check`, which still passes.
    pub warnings: Vec<ConfigError>,
    /// What the next load may reuse (see [`Memo`]).
    pub memo: Memo,
    /// Lines of the live robots.txt where robots that obey the file may get another verdict
    /// from robogate than their parser reads there (see [`crate::robots::Disagreement`]): a
    /// rule the two readings read differently is not enforced as written; one that first-match
    /// readers, readers without wildcard support or strict parsers read otherwise is enforced,
    /// and may refuse them. Logged like [`Loaded::warnings`] (see [`Loaded::to_log`]);
    /// `config check` prints `robogate lint`'s fuller findings for them instead.
    pub disagreements: Vec<ConfigError>,
    /// `[[server.tls]]`: the certificates to serve (`None`: no entries).
    pub certs: Option<Arc<crate::tls::CertSet>>,
}

impl Loaded {
    /// Every warning to log when the policy goes live.
    pub fn to_log(&self) -> impl Iterator<Item = &ConfigError> {
        self.warnings.iter().chain(&self.disagreements)
    }
}

/// What the loader brought from the network for a compile ([`Written::compile`] does no I/O).
#[derive(Debug, Default)]
pub struct Network {
    /// The origin's robots.txt, when [`Written::origin_robots`] asked for a copy.
    pub robots: Option<origin::Fetched>,
    /// `origin.address` looked up, when it names a host ([`Written::origin_lookup`]).
    pub origin_address: Option<Lookup>,
}

pub(super) fn compile_written(
    written: Written,
    generation: u64,
    previous: Option<&Memo>,
    network: Network,
) -> Result<Loaded, ConfigErrors> {
    let Written {
        path,
        base,
        text,
        raw,
        read_errors,
    } = written;
    let config_path = path.as_path();
    let base = base.as_path();
    let mut errors = Errors {
        file: config_path,
        text: &text,
        list: read_errors,
        warnings: Vec::new(),
        disagreements: Vec::new(),
    };
    let compiled = compile(&raw, base, previous, network, &mut errors);
    match compiled {
        Some((settings, parts)) if errors.list.is_empty() => {
            let mut files = vec![config_path.to_path_buf()];
            files.extend(parts.files.iter().cloned());
            let status = parts.robots.status.to_le_bytes();
            let lists = parts.verify_fingerprint.to_le_bytes();
            let origin = parts.upstream.socket.to_string();
            let mut inputs: Vec<&[u8]> = vec![
                text.as_bytes(),
                &parts.robots.body,
                &status,
                origin.as_bytes(),
                &lists,
            ];
            if let Some(a) = &parts.agents_text {
                inputs.push(a.as_bytes());
            }
            inputs.extend(parts.tls.bytes.iter().map(Vec::as_slice));
            let ca = parts.upstream.tls.as_ref().and_then(|t| t.ca.clone());
            inputs.extend(ca.iter().flat_map(|c| c.iter().map(|d| d.as_ref())));
            let fp = fingerprint(&inputs);
            Ok(Loaded {
                settings,
                policy: Policy {
                    generation,
                    robots: parts.robots.clone(),
                    x_robots_tags: parts.x_robots_tags,
                    classifier: parts.classifier.1.clone(),
                    enforce: parts.enforce,
                    tarpit: parts.tarpit,
                    crawl_delay: parts.crawl_delay,
                    verify: parts.verify,
                    site_host: parts.upstream.host.clone(),
                    trap: parts.trap,
                    rapid_fire: parts.rapid_fire,
                    fairness: parts.fairness,
                    fingerprint: parts.fingerprint,
                    license: parts.license,
                    pay_per_crawl: parts.pay_per_crawl,
                },
                upstream: parts.upstream,
                memo: Memo {
                    catalog: Some(parts.classifier),
                    origin: parts.robots_origin.map(|state| OriginMemo {
                        robots: parts.robots,
                        state,
                    }),
                    fingerprint: fp,
                },
                files,
                robots_fetch_failure: parts.robots_fetch_failure,
                robots_file: parts.robots_file,
                warnings: errors.warnings,
                disagreements: errors.disagreements,
                certs: parts.tls.certs,
            })
        }
        _ => Err(ConfigErrors(errors.list)),
    }
}

struct Parts {
    robots: Arc<RobotsFile>,
    robots_origin: Option<OriginState>,
    x_robots_tags: Vec<crate::policy::XRobotsTag>,
    classifier: Compiled,
    agents_text: Option<String>,
    enforce: Enforcement,
    tarpit: Tarpit,
    crawl_delay: CrawlDelay,
    verify: Verification,
    /// The published lists' contents (see `verify::Compiled::fingerprint`).
    verify_fingerprint: u64,
    upstream: Upstream,
    trap: crate::policy::Trap,
    rapid_fire: crate::policy::RapidFire,
    fairness: crate::policy::Fairness,
    fingerprint: crate::policy::Fingerprint,
    license: Option<crate::policy::Licensing>,
    pay_per_crawl: Option<crate::policy::PayPerCrawl>,
    files: Vec<PathBuf>,
    robots_fetch_failure: Option<String>,
    robots_file: Option<PathBuf>,
    tls: tls::ServerTls,
}

fn compile(
    raw: &RawConfig,
    base: &Path,
    previous: Option<&Memo>,
    network: Network,
    errors: &mut Errors<'_>,
) -> Option<(Settings, Parts)> {
    let Network {
        robots: fetched,
        origin_address,
    } = network;
    // A section that could not be read holds placeholders: it is neither checked nor used (its
    // problems are reported already), and the other sections are still checked.
    let mut settings = compile_settings(raw, base, errors);
    let server_tls = raw
        .read("server")
        .then(|| tls::compile_server_tls_for(raw, base, settings.as_mut(), errors))
        .flatten();
    let origin_tls = raw
        .read("origin")
        .then(|| tls::compile_origin_tls(raw, base, errors))
        .flatten();
    let upstream = raw
        .read("origin")
        .then(|| compile_upstream(raw, origin_address.as_ref(), errors))
        .flatten()
        .and_then(|mut up| {
            up.tls = origin_tls.clone()?;
            Some(up)
        });
    if let (Some(settings), Some(upstream)) = (&settings, &upstream) {
        if settings::is_own_listener(settings.listen, upstream.socket) {
            errors.push(
                Some(raw.origin.address.span()),
                "origin.address",
                format!(
                    "{} is robogate's own server.listen ({}): every request would be proxied \
                     back to robogate, round and round; give the origin's address",
                    upstream.socket, settings.listen
                ),
            );
        }
    }
    if raw.read("robots")
        && raw.read("origin")
        && raw.robots.source.get_ref() == "origin"
        && raw.origin.host.is_none()
    {
        errors.warn(
            Some(raw.robots.source.span()),
            "origin.host",
            format!(
                "robots.source = \"origin\" without origin.host: robots.txt is fetched with \
                 `Host: {}`, which on a name-based virtual host is the default site's \
                 robots.txt, not this site's; set origin.host to the site's name",
                raw.origin.address.get_ref().trim()
            ),
        );
    }
    let (classifier, agents_file, agents_text) = match raw.read("agents") {
        true => load_agents(raw, base, previous, errors),
        false => (None, Vec::new(), None),
    };
    let mut trap = raw
        .read("trap")
        .then(|| trap::compile_trap(&raw.trap, errors))
        .flatten();
    let rapid_fire = raw
        .read("rapid_fire")
        .then(|| trap::compile_rapid_fire(&raw.rapid_fire, errors))
        .flatten();
    let fairness = raw
        .read("fairness")
        .then(|| fairness::compile_fairness(&raw.fairness, errors))
        .flatten();
    let fingerprint = raw
        .read("fingerprint")
        .then(|| fingerprint::compile_fingerprint(&raw.fingerprint, &raw.server, errors))
        .flatten();
    let license = raw.license.as_ref().filter(|_| raw.read("license"));
    let licensing = license.and_then(|l| license::compile_license(l, errors));
    let pay_per_crawl = raw
        .pay_per_crawl
        .as_ref()
        .filter(|_| raw.read("pay_per_crawl"))
        .and_then(|p| pay_per_crawl::compile_pay_per_crawl(p, base, errors));
    let trap_paths: Vec<String> = trap
        .iter()
        .flat_map(|t| t.paths.iter().map(|p| p.written.clone()))
        .collect();
    let sources = robots::Sources {
        base,
        previous,
        fetched: fetched.as_ref(),
        trap_paths: &trap_paths,
    };
    if raw.read("robots") {
        robots::keys_of_other_sources(&raw.robots, errors);
    }
    let classifier_for = |section| classifier.as_ref().filter(|_| raw.read(section));
    let robots = classifier_for("robots")
        .and_then(|(_, c)| robots::compile(&raw.robots, c, &sources, errors));
    let x_robots_tags = classifier_for("x_robots_tag")
        .and_then(|(_, c)| robots::compile_x_robots_tags(&raw.x_robots_tag, c, errors));
    let enforce =
        classifier_for("enforce").and_then(|(_, c)| compile_enforce(&raw.enforce, c, errors));
    let tarpit = raw
        .read("tarpit")
        .then(|| compile_tarpit(&raw.tarpit, errors))
        .flatten();
    let verify = classifier_for("verify").and_then(|(_, c)| {
        let served = robots.as_ref().map(|r| &r.file.robots);
        verify::compile_verify(&raw.verify, base, c, served, errors)
    });
    if !raw.unread.is_empty() {
        return None;
    }
    let crawl_delay = CrawlDelay {
        enforce: raw.crawl_delay.enforce,
        override_delay: raw.crawl_delay.r#override,
        pace_ignorers: raw.crawl_delay.pace_ignorers,
    };
    let robots = robots?;
    if let Some(trap) = &mut trap {
        robots::check_trap_paths(&raw.robots, &robots.file, trap, errors);
    }
    if let Some((_, classifier)) = &classifier {
        robots::disagreement_warnings(&raw.robots, &robots, classifier, errors);
    }
    if let Some(license) = license {
        license::warn_unannounced(license, &robots.file, errors);
    }
    let robots_file = match raw.robots.source.get_ref().as_str() {
        "file" => robots.files.first().cloned(),
        _ => None,
    };
    let mut files = robots.files;
    files.extend(agents_file);
    let server_tls = server_tls?;
    files.extend(server_tls.files.iter().cloned());
    if let Some(ca) = raw.origin.ca.as_ref().filter(|_| *raw.origin.tls.get_ref()) {
        files.push(resolve(base, ca.get_ref()));
    }
    let verify_fingerprint = verify.as_ref().map_or(0, |v| v.fingerprint);
    let verify = verify.map(|v| {
        files.extend(v.files);
        v.verification
    });
    Some((
        settings?,
        Parts {
            robots: robots.file,
            robots_origin: robots.origin,
            x_robots_tags: x_robots_tags?,
            classifier: classifier?,
            agents_text,
            enforce: enforce?,
            tarpit: tarpit?,
            crawl_delay,
            verify: verify?,
            verify_fingerprint,
            upstream: upstream?,
            trap: trap?,
            rapid_fire: rapid_fire?,
            fairness: fairness?,
            fingerprint: fingerprint?,
            license: licensing,
            pay_per_crawl,
            files,
            robots_fetch_failure: robots.fetch_failure,
            robots_file,
            tls: server_tls,
        },
    ))
}

#[cfg(test)]
mod tests;
