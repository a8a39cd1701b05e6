//! The request path's share of the access log, per line: the old way (a `tracing::info!` event
//! through tracing-subscriber's `fmt` layer — EnvFilter, field visiting, a timestamp formatted
//! per line — into `tracing_appender::non_blocking`, one `to_vec` + channel send per line, its
//! thread writing each line to a sink) against the new one ([`Writer::append`]: the line's
//! fields copied as a record into this thread's shard, a whole 64 KiB buffer handed to the
//! writer thread, whose formatting and sink write are not timed). `new_format_only` is the
//! writer thread's share: one line formatted by hand. Both in text and JSON.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::SystemTime;

use criterion::{criterion_group, criterion_main, Criterion};
use robogate::access_log::{Line, Writer};
use robogate::policy::{Read, Version};

/// robogate's allocator, as in the binary (`src/main.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const UA: &[u8] = b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

fn line<'a>(uri: &'a str, read: Read) -> Line<'a> {
    Line {
        cut: false,
        client: Some([203, 0, 113, 7].into()),
        method: "GET",
        path: uri,
        status: 200,
        class: "browser",
        agent: "-",
        robot: "-",
        verdict: "-",
        action: "pass",
        reason: "-",
        fingerprint: "-",
        robots_line: 0,
        robots_version: Version(0xab12cd34ef56),
        robots_read: read,
        identity: "none",
        proof: "-",
        generation: 1,
        duration: std::time::Duration::from_micros(731),
        user_agent: Some(UA),
    }
}

/// The old `record()`'s event.
fn old_event(l: &Line<'_>) {
    tracing::info!(
        target: "access",
        client = %l.client.map_or_else(|| "-".to_string(), |ip| ip.to_string()),
        method = %l.method,
        path = %l.path,
        status = l.status,
        class = l.class,
        agent = l.agent,
        verdict = l.verdict,
        action = l.action,
        reason = l.reason,
        robots_line = l.robots_line,
        robots_version = %l.robots_version,
        robots_read = %l.robots_read.label(),
        identity = l.identity,
        proof = l.proof,
        generation = l.generation,
        duration_ms = l.duration.as_secs_f64() * 1000.0,
        user_agent = %String::from_utf8_lossy(l.user_agent.unwrap_or(b"-")),
    );
}

fn access_log(c: &mut Criterion) {
    let l = line(
        "/blog/2025/03/a-post-about-robots.html?ref=home",
        Read::Unknown,
    );
    let mut group = c.benchmark_group("access_log");
    for json in [false, true] {
        let format = if json { "json" } else { "text" };
        let (writer, _guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
            .lossy(false)
            .finish(std::io::sink());
        let builder = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
            .with_writer(writer)
            .with_ansi(false);
        let dispatch = if json {
            tracing::Dispatch::new(builder.json().flatten_event(true).finish())
        } else {
            tracing::Dispatch::new(builder.finish())
        };
        tracing::dispatcher::with_default(&dispatch, || {
            group.bench_function(format!("old_tracing_event_{format}"), |b| {
                b.iter(|| old_event(black_box(&l)))
            });
        });
        let new = Writer::start(
            json,
            Box::new(std::io::sink()),
            Arc::new(AtomicBool::new(false)),
        )
        .expect("writer thread");
        group.bench_function(format!("new_append_{format}"), |b| {
            b.iter(|| new.append(black_box(&l)))
        });
        group.bench_function(format!("new_format_only_{format}"), |b| {
            let mut out = Vec::with_capacity(1 << 20);
            b.iter(|| {
                if out.len() > 1 << 19 {
                    out.clear();
                }
                robogate::access_log::format::append(
                    &mut out,
                    black_box(&l),
                    json,
                    SystemTime::now(),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, access_log);
criterion_main!(benches);
