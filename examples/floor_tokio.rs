//! The floor of a tokio HTTP/1 proxy, for the benchmarks only: one thread, `httparse`, one pooled
//! origin connection per request, the loadbench block list as two substring rules, no log, no
//! metrics, and no care for anything but the loadbench's traffic (GET, Content-Length answers).
//! It is not a proxy to use; it says how close to nginx a tokio proxy can come on this machine
//! (BENCHMARKS.md, "Stop 23": 1.01× nginx, 8 µs of CPU a request against nginx's 11).
//!
//!     cargo build --release --example floor_tokio
//!     bash ../shared/bench/loadbench.sh 18080 "$PWD/target/release/examples/floor_tokio 127.0.0.1:18080"
//!
//! Arguments: the listen address, the origin address (else 127.0.0.1:$ORIGIN_PORT, else :18000).

use std::cell::RefCell;
use std::io::Result;
use std::rc::Rc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Pool = Rc<RefCell<Vec<TcpStream>>>;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:18080".into());
    let origin: Rc<str> = args
        .next()
        .unwrap_or_else(|| {
            let port = std::env::var("ORIGIN_PORT").unwrap_or_else(|_| "18000".into());
            format!("127.0.0.1:{port}")
        })
        .into();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    tokio::task::LocalSet::new().block_on(&rt, async move {
        let listener = TcpListener::bind(&listen).await?;
        let pool = Pool::default();
        loop {
            let (client, _) = listener.accept().await?;
            client.set_nodelay(true)?;
            let (pool, origin) = (pool.clone(), origin.clone());
            tokio::task::spawn_local(async move { serve(client, pool, origin).await });
        }
    })
}

/// loadbench's nginx rules: GPTBot and CCBot everywhere, other robots on /private/ (but
/// /private/public/) and /search.
fn denied(user_agent: &[u8], path: &[u8]) -> bool {
    let ua = user_agent.to_ascii_lowercase();
    let has = |word: &[u8]| memchr::memmem::find(&ua, word).is_some();
    if has(b"gptbot") || has(b"ccbot") {
        return true;
    }
    (has(b"bot") || has(b"crawl") || has(b"spider"))
        && !path.starts_with(b"/private/public/")
        && (path.starts_with(b"/private/") || path.starts_with(b"/search"))
}

/// The request head to send on, or `None` for a 403; and the head's length.
fn parse(buf: &[u8]) -> Option<(usize, Option<Vec<u8>>)> {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut fields);
    let len = match req.parse(buf).ok()? {
        httparse::Status::Complete(len) => len,
        httparse::Status::Partial => return None,
    };
    let path = req.path?.as_bytes();
    let ua = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("user-agent"))
        .map_or(&b""[..], |h| h.value);
    if denied(ua, path) {
        return Some((len, None));
    }
    let mut head = Vec::with_capacity(len + 64);
    head.extend_from_slice(req.method?.as_bytes());
    head.push(b' ');
    head.extend_from_slice(path);
    head.extend_from_slice(b" HTTP/1.1\r\n");
    for field in req.headers.iter() {
        if !field.name.eq_ignore_ascii_case("connection") {
            head.extend_from_slice(field.name.as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(field.value);
            head.extend_from_slice(b"\r\n");
        }
    }
    head.extend_from_slice(b"X-Forwarded-For: 127.0.0.1\r\n\r\n");
    Some((len, Some(head)))
}

async fn serve(mut client: TcpStream, pool: Pool, origin: Rc<str>) -> Result<()> {
    let (mut buf, mut have) = (vec![0u8; 8192], 0);
    let mut from_origin = vec![0u8; 16384];
    let mut answer = Vec::with_capacity(16384);
    loop {
        let (len, head) = loop {
            if let Some(parsed) = parse(&buf[..have]) {
                break parsed;
            }
            match client.read(&mut buf[have..]).await? {
                0 => return Ok(()),
                n => have += n,
            }
        };
        buf.copy_within(len..have, 0);
        have -= len;
        let Some(head) = head else {
            client
                .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 10\r\n\r\nForbidden\n")
                .await?;
            continue;
        };
        let pooled = pool.borrow_mut().pop();
        let mut upstream = match pooled {
            Some(upstream) => upstream,
            None => {
                let upstream = TcpStream::connect(&*origin).await?;
                upstream.set_nodelay(true)?;
                upstream
            }
        };
        upstream.write_all(&head).await?;
        answer.clear();
        let mut got = 0;
        loop {
            match upstream.read(&mut from_origin[got..]).await? {
                0 => return Ok(()),
                n => got += n,
            }
            let mut fields = [httparse::EMPTY_HEADER; 64];
            let mut resp = httparse::Response::new(&mut fields);
            if let Ok(httparse::Status::Complete(n)) = resp.parse(&from_origin[..got]) {
                let length: usize = resp
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| std::str::from_utf8(h.value).ok()?.parse().ok())
                    .unwrap_or(0);
                answer.extend_from_slice(&from_origin[..got]);
                let mut body = got - n;
                while body < length {
                    match upstream.read(&mut from_origin[..]).await? {
                        0 => return Ok(()),
                        m => {
                            answer.extend_from_slice(&from_origin[..m]);
                            body += m;
                        }
                    }
                }
                break;
            }
        }
        pool.borrow_mut().push(upstream);
        client.write_all(&answer).await?;
    }
}
