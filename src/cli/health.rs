//! `robogate health`: asks a running robogate's admin listener for `/healthz`, for a container's
//! `HEALTHCHECK` or a script (an image of robogate alone has no curl).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The admin listener (`admin.listen`); a wildcard address is asked on loopback.
    #[arg(long, default_value = "127.0.0.1:8099")]
    pub admin: SocketAddr,
    /// How long to wait for the answer.
    #[arg(long, default_value = "3s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
}

/// Exit 0 when `/healthz` answers 200, 1 (with why on stderr) otherwise.
pub fn run(args: &HealthArgs) -> ExitCode {
    match healthz(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("robogate health: {why}");
            ExitCode::from(1)
        }
    }
}

fn healthz(args: &HealthArgs) -> Result<(), String> {
    let mut addr = args.admin;
    if addr.ip().is_unspecified() {
        let loopback = match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        };
        addr.set_ip(loopback);
    }
    let mut stream = TcpStream::connect_timeout(&addr, args.timeout)
        .map_err(|e| format!("cannot connect to the admin listener {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(args.timeout))
        .and_then(|()| stream.set_write_timeout(Some(args.timeout)))
        .map_err(|e| e.to_string())?;
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("{addr}: {e}"))?;
    let mut answer = Vec::new();
    stream
        .take(64 * 1024)
        .read_to_end(&mut answer)
        .map_err(|e| format!("{addr}: no answer: {e}"))?;
    let status_line = answer.split(|&b| b == b'\n').next().unwrap_or_default();
    let status_line = String::from_utf8_lossy(status_line);
    match status_line.split(' ').nth(1) {
        Some("200") => Ok(()),
        _ => Err(format!(
            "{addr}/healthz answered {:?}",
            status_line.trim_end()
        )),
    }
}
