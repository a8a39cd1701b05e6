//! `robogate lint`: a robots.txt's problems, with the catalog's robots in mind; with `--fetch`,
//! whether each RSL licence its `License:` lines name can be fetched.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::inputs::read_robots_arg;

#[derive(Debug, Args)]
pub struct LintArgs {
    /// The robots.txt to lint; `-` reads it from standard input.
    pub file: PathBuf,
    /// Also fetch each licence a `License:` line names, and say whether it is an RSL document
    /// (the one network access lint makes).
    #[arg(long)]
    pub fetch: bool,
}

/// How long one licence fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes of a licence read (an RSL document is a few kilobytes; a feed may be longer).
const MAX_LICENSE_BYTES: u64 = 1024 * 1024;

/// RSL 1.0's XML namespace: a licence document's `<rsl>` root element declares it.
const RSL_NAMESPACE: &str = "https://rslstandard.org/rsl";

pub fn run(args: &LintArgs) -> ExitCode {
    let (bytes, name) = match read_robots_arg(&args.file) {
        Ok(read) => read,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let catalog = crate::classify::Catalog::builtin();
    let mut warnings: Vec<String> = crate::config::lint_catalog(&bytes, catalog.agents())
        .iter()
        .map(ToString::to_string)
        .collect();
    if args.fetch {
        let robots = crate::robots::Robots::parse(&bytes);
        for license in robots.licenses() {
            let Some(url) = license.url() else {
                continue; // warned about as not an absolute URL already
            };
            let line = license.line;
            match fetch_license(&url.to_string()) {
                Ok(kind) => println!("{name}: line {line}: License {url}: fetched, {kind}"),
                Err(why) => warnings.push(format!("line {line}: License {url}: {why}")),
            }
        }
    }
    for w in &warnings {
        println!("{name}: {w}");
    }
    if warnings.is_empty() {
        println!("{name}: no warnings");
        ExitCode::SUCCESS
    } else {
        eprintln!("{} warning(s)", warnings.len());
        ExitCode::from(1)
    }
}

/// Fetches a licence: `Ok` with what it is when it is an RSL document (XML whose `<rsl>` root
/// declares RSL's namespace), else why a crawler following the line would find none.
fn fetch_license(url: &str) -> Result<String, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(FETCH_TIMEOUT))
        .max_redirects(5)
        .http_status_as_error(false)
        .user_agent(concat!("robogate-lint/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut response = agent
        .get(url)
        .header(
            "Accept",
            "application/rsl+xml, application/xml;q=0.9, */*;q=0.1",
        )
        .call()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => "did not answer within 10 s".to_owned(),
            e => format!("cannot be fetched ({e})"),
        })?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(format!(
            "answers {status}, not 200: a crawler finds no licence there"
        ));
    }
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_LICENSE_BYTES)
        .read_to_vec()
        .map_err(|e| format!("its body cannot be read ({e})"))?;
    read_license(&body, &content_type)
}

/// Whether `body` is an RSL document: its first element is `<rsl …>` declaring RSL's namespace
/// (RSL 1.0, "Document Structure"). Not a full XML check: enough to tell a licence from an error
/// page, a redirect to a home page or a file of another kind.
fn read_license(body: &[u8], content_type: &str) -> Result<String, String> {
    let text = String::from_utf8_lossy(body);
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    // The prolog: an XML declaration, comments, processing instructions, a doctype.
    while let Some(after) = rest.strip_prefix("<?").or_else(|| rest.strip_prefix("<!")) {
        let end = if after.starts_with("--") { "-->" } else { ">" };
        let Some(i) = after.find(end) else { break };
        rest = after[i + end.len()..].trim_start();
    }
    let root = rest
        .strip_prefix('<')
        .map(|r| &r[..r.find('>').unwrap_or(r.len())]);
    let Some(root) = root else {
        return Err("is not XML: not an RSL licence".into());
    };
    let name = root
        .split(|c: char| c.is_whitespace() || c == '/')
        .next()
        .unwrap_or("");
    if name.rsplit(':').next() != Some("rsl") {
        return Err(format!(
            "is XML whose root is <{name}>, not <rsl>: not an RSL licence"
        ));
    }
    if !root.contains(RSL_NAMESPACE) {
        return Err(format!(
            "has an <rsl> root without RSL's namespace ({RSL_NAMESPACE})"
        ));
    }
    let kind = content_type.split(';').next().unwrap_or("").trim();
    Ok(match kind {
        "application/rsl+xml" => "an RSL document (application/rsl+xml)".to_owned(),
        "" => "an RSL document (served without a Content-Type)".to_owned(),
        other => format!("an RSL document (served as {other}; RSL's type is application/rsl+xml)"),
    })
}

#[cfg(test)]
mod tests {
    use super::read_license;

    #[test]
    fn an_rsl_document_is_told_from_other_answers() {
        let rsl =
            "<?xml version=\"1.0\"?>\n<!-- terms -->\n<rsl xmlns=\"https://rslstandard.org/rsl\">\
            <content url=\"/\"><license/></content></rsl>";
        let ok = read_license(rsl.as_bytes(), "application/rsl+xml").unwrap();
        assert!(ok.contains("application/rsl+xml"), "{ok}");
        let typed = read_license(rsl.as_bytes(), "text/xml; charset=utf-8").unwrap();
        assert!(typed.contains("served as text/xml"), "{typed}");
        let prefixed = "<r:rsl xmlns:r=\"https://rslstandard.org/rsl\"/>";
        assert!(read_license(prefixed.as_bytes(), "").is_ok());
        for (body, needle) in [
            ("<html><body>Not found</body></html>", "root is <html>"),
            ("{\"license\": 1}", "not XML"),
            ("<rsl><content/></rsl>", "without RSL's namespace"),
            ("", "not XML"),
        ] {
            let why = read_license(body.as_bytes(), "text/html").unwrap_err();
            assert!(why.contains(needle), "{body:?}: {why}");
        }
    }
}
