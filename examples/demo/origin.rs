//! The demo origin: a tiny HTTP/1.1 site with public pages, a private area, an admin area and
//! search results, so robogate has something to protect. Also used by the integration tests.
//!
//! `/headers` answers with the request head it received (handy to see what robogate forwards).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const LAYOUT_HEAD: &str = "<!doctype html><html><head><meta charset=\"utf-8\"><title>";

fn page(title: &str, body: &str) -> String {
    format!("{LAYOUT_HEAD}{title}</title></head><body><h1>{title}</h1>{body}</body></html>\n")
}

/// Every page of the demo site: (path, title, body).
pub const PAGES: &[(&str, &str, &str)] = &[
    (
        "/",
        "robogate demo site",
        "<p>Welcome.</p><ul>\
        <li><a href=\"/about.html\">About</a></li>\
        <li><a href=\"/blog/\">Blog</a></li>\
        <li><a href=\"/private/report.html\">Private report</a></li>\
        <li><a href=\"/private/press/release.html\">Press release</a></li>\
        <li><a href=\"/admin/\">Admin</a></li>\
        <li><a href=\"/search?q=robots\">Search for robots</a></li></ul>",
    ),
    (
        "/about.html",
        "About",
        "<p>A site behind robogate. <a href=\"/\">Home</a></p>",
    ),
    (
        "/blog/",
        "Blog",
        "<ul><li><a href=\"/blog/first-post.html\">First post</a></li>\
        <li><a href=\"/blog/second-post.html\">Second post</a></li></ul>",
    ),
    (
        "/blog/first-post.html",
        "First post",
        "<p>Robots welcome here. <a href=\"/blog/\">Blog</a></p>",
    ),
    (
        "/blog/second-post.html",
        "Second post",
        "<p>And here. <a href=\"/private/report.html\">Report</a></p>",
    ),
    (
        "/private/report.html",
        "Private report",
        "<p>Robots should not read this.</p>",
    ),
    (
        "/private/press/release.html",
        "Press release",
        "<p>Robots may read this one.</p>",
    ),
    (
        "/admin/",
        "Admin",
        "<p>Admin pages. <a href=\"/admin/users.html\">Users</a></p>",
    ),
    ("/admin/users.html", "Users", "<p>Nothing for robots.</p>"),
    ("/search", "Search results", "<p>No results.</p>"),
];

/// The origin's own robots.txt: robogate serves conf/robots.txt instead, so this never shows.
pub const ORIGIN_ROBOTS: &str =
    "# the demo origin's own robots.txt (robogate serves its own)\nUser-agent: *\nDisallow:\n";

struct Request {
    method: String,
    target: String,
    head: String,
    keep_alive: bool,
}

async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Request> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            let mut lines = head.lines();
            let mut first = lines.next()?.split_whitespace();
            let (method, target, version) = (first.next()?, first.next()?, first.next()?);
            let header = |name: &str| {
                head.lines().skip(1).find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.trim()
                        .eq_ignore_ascii_case(name)
                        .then(|| v.trim().to_ascii_lowercase())
                })
            };
            let connection = header("connection").unwrap_or_default();
            let keep_alive = if version == "HTTP/1.0" {
                connection == "keep-alive"
            } else {
                connection != "close"
            };
            let body_len: usize = header("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            while buf.len() < body_len {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            buf.drain(..body_len);
            return Some(Request {
                method: method.into(),
                target: target.into(),
                head,
                keep_alive,
            });
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn respond(req: &Request) -> (u16, &'static str, String) {
    let path = req.target.split('?').next().unwrap_or("/");
    if path == "/headers" {
        return (200, "text/plain; charset=utf-8", format!("{}\n", req.head));
    }
    if path == "/robots.txt" {
        return (200, "text/plain", ORIGIN_ROBOTS.to_string());
    }
    if path == "/sitemap.xml" {
        return (200, "application/xml", sitemap());
    }
    match PAGES.iter().find(|(p, _, _)| *p == path) {
        Some((_, title, body)) => (200, "text/html; charset=utf-8", page(title, body)),
        None => (
            404,
            "text/html; charset=utf-8",
            page("Not found", "<p>No such page.</p>"),
        ),
    }
}

/// The pages robots may read, under the address the quick start serves the site at: the
/// shipped `conf/robots.txt` names this sitemap.
pub const SITEMAP_PAGES: &[&str] = &[
    "/",
    "/about.html",
    "/blog/",
    "/blog/first-post.html",
    "/blog/second-post.html",
    "/private/press/release.html",
];

fn sitemap() -> String {
    let urls: String = SITEMAP_PAGES
        .iter()
        .map(|p| format!("  <url><loc>http://localhost:8080{p}</loc></url>\n"))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n{urls}</urlset>\n"
    )
}

async fn connection(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    while let Some(req) = read_request(&mut stream, &mut buf).await {
        let (status, content_type, body) = respond(&req);
        let reason = if status == 200 { "OK" } else { "Not Found" };
        // A HEAD answer's length is the GET's (RFC 9110 §8.6); only the body is left out.
        let head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nX-Origin: demo\r\n{}\r\n",
            body.len(),
            if req.keep_alive { "" } else { "Connection: close\r\n" }
        );
        let body = if req.method == "HEAD" {
            String::new()
        } else {
            body
        };
        // One write per response: a head and body in two small writes meet Nagle's algorithm
        // and the peer's delayed ACK, and every response would wait 40 ms.
        if stream
            .write_all(format!("{head}{body}").as_bytes())
            .await
            .is_err()
        {
            return;
        }
        if !req.keep_alive {
            return;
        }
    }
}

/// Serves the demo site on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(connection(stream));
    }
}
