//! Quick start: the demo origin on 127.0.0.1:8000 and robogate in front of it with the shipped
//! `conf/` (public :8080, admin 127.0.0.1:8099; another `--config` may say otherwise, and
//! robogate's "robogate starting" line names the addresses it actually bound).
//!
//!     cargo run --example demo
//!     curl -A 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/133.0' localhost:8080/
//!     curl -A GPTBot localhost:8080/blog/      # 403: GPTBot may fetch nothing
//!     curl -A Wget localhost:8080/private/report.html   # 403: the * group disallows /private/

mod origin;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let origin_addr =
        std::env::var("ROBOGATE_DEMO_ORIGIN").unwrap_or_else(|_| "127.0.0.1:8000".into());
    let listener = match std::net::TcpListener::bind(&origin_addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "demo origin: cannot listen on {origin_addr}: {e} (ROBOGATE_DEMO_ORIGIN moves it; \
                 point a copy of conf/'s [origin] address there too: README, Quick start)"
            );
            return ExitCode::from(1);
        }
    };
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        rt.block_on(async move {
            listener
                .set_nonblocking(true)
                .expect("non-blocking listener");
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            origin::serve(listener).await
        });
    });
    let mut args = vec!["robogate".to_string()];
    args.extend(std::env::args().skip(1));
    if !args.iter().any(|a| a == "--config" || a == "-c") {
        args.extend([
            "--config".into(),
            concat!(env!("CARGO_MANIFEST_DIR"), "/conf/robogate.toml").into(),
        ]);
    }
    // robogate's own addresses come from its config: it says where it listens once both
    // listeners are bound (its "robogate starting" line), or why it could not.
    eprintln!("demo origin serving on http://{origin_addr}; starting robogate");
    robogate::cli::run(robogate::cli::Cli::parse_from(args))
}
