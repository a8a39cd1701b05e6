//! The tarpit: a plausible HTML page dripped a few bytes per tick, close-delimited (no
//! Content-Length, so pingora flushes every write), bounded in time and size, capped globally and
//! per client IP (the caps are live state: `state::tarpits`). Each tarpit is a parked tokio task between ticks: no worker thread is held.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header;
use pingora_error::{ErrorType, Result};
use pingora_http::ResponseHeader;
use pingora_proxy::Session;

use crate::metrics::METRICS;
use crate::policy::Tarpit;

/// An endless, plausible archive page whose links lead deeper under the request path, so a
/// crawler that ignores robots.txt keeps finding more disallowed URLs to waste time on.
pub struct Maze {
    base: String,
    pending: Vec<u8>,
    state: u64,
    entry: u64,
}

impl Maze {
    pub fn new(path: &str) -> Maze {
        let path = path.split(['?', '#']).next().unwrap_or("/");
        let base = format!("{}/", path.trim_end_matches('/'));
        let state = crate::policy::fingerprint(&[path.as_bytes()]) | 1;
        let head = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Archive</title></head>\n<body><h1>Archive</h1>\n";
        Maze {
            base,
            pending: head.as_bytes().to_vec(),
            state,
            entry: 0,
        }
    }

    fn next_word(&mut self) -> u64 {
        // xorshift64: cheap, deterministic per path.
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// The next `n` bytes of the page.
    pub fn take(&mut self, n: usize) -> Bytes {
        while self.pending.len() < n {
            self.entry += 1;
            let (id, more) = (self.next_word(), self.next_word());
            let mut p = String::new();
            let _ = writeln!(
                p,
                "<p>Entry {}: <a href=\"{}{:012x}.html\">record {:x}</a> and <a href=\"{}{:08x}/\">more</a></p>",
                self.entry,
                self.base,
                id >> 16,
                id & 0xffff,
                self.base,
                more >> 32
            );
            self.pending.extend_from_slice(p.as_bytes());
        }
        Bytes::from(self.pending.drain(..n).collect::<Vec<u8>>())
    }
}

/// Drips the maze until the time or size budget is spent, the client leaves, or the process
/// shuts down. Never buffers the body; swallows the write error of a departed client.
pub async fn drip(session: &mut Session, limits: &Tarpit, path: &str) -> Result<()> {
    session.set_keepalive(None);
    // The connection ends with the drip, so a pipelined next request is never answered: no
    // need for pingora to keep its bytes ([`hang_up`] reads past them as before).
    session.as_downstream_mut().set_pipelining_enabled(false);
    session.set_write_timeout(Some(limits.interval * 4 + Duration::from_secs(5)));
    // A client's FIN ends the tarpit at once instead of waiting for the next write to fail.
    session.set_abort_on_close(true);
    let mut resp = ResponseHeader::build(200, Some(3))?;
    resp.insert_header(header::CONTENT_TYPE, "text/html; charset=utf-8")?;
    resp.insert_header(header::CACHE_CONTROL, "no-store")?;
    resp.insert_header(header::CONNECTION, "close")?;
    let started = Instant::now();
    let mut sent = 0usize;
    let mut maze = Maze::new(path);
    if session
        .write_response_header(Box::new(resp), false)
        .await
        .is_ok()
    {
        while started.elapsed() < limits.duration
            && sent < limits.max_bytes
            && !session.is_process_shutting_down()
        {
            let chunk = maze.take(limits.chunk_bytes.min(limits.max_bytes - sent));
            let n = chunk.len();
            if session
                .write_response_body(Some(chunk), false)
                .await
                .is_err()
            {
                break;
            }
            sent += n;
            METRICS.tarpit_bytes.inc_by(n as u64);
            let gone = tokio::select! {
                _ = tokio::time::sleep(limits.interval) => false,
                _ = hang_up(session) => true,
            };
            if gone {
                break;
            }
        }
        let _ = session.write_response_body(None, true).await;
    }
    METRICS
        .tarpit_seconds
        .inc_by(started.elapsed().as_secs_f64());
    Ok(())
}

/// Resolves when the client hangs up (FIN or reset). A request body is read and dropped. Bytes
/// after the request (a pipelined request) are not a hang-up: this then waits for the next tick,
/// which looks again (pingora drops one such byte per look).
async fn hang_up(session: &mut Session) {
    loop {
        match session.as_downstream_mut().read_body_or_idle(false).await {
            Ok(_) => {} // a chunk of the request body, or its end
            // pingora's "sent data after end of body"; it has consumed one byte
            Err(e) if e.etype() == &ErrorType::ConnectError => std::future::pending().await,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maze_links_stay_under_the_request_path() {
        let mut m = Maze::new("/private/report.html?x=1");
        let text = String::from_utf8(m.take(4000).to_vec()).unwrap();
        assert!(text.starts_with("<!doctype html>"));
        let links: Vec<&str> = text
            .split("href=\"")
            .skip(1)
            .filter_map(|s| s.find('"').map(|end| &s[..end]))
            .collect();
        assert!(links.len() > 10);
        assert!(
            links.iter().all(|l| l.starts_with("/private/report.html/")),
            "{links:?}"
        );
    }

    #[test]
    fn maze_is_served_in_exact_chunks() {
        let mut m = Maze::new("/");
        assert!((0..500).all(|_| m.take(7).len() == 7));
    }
}
