//! A bare pingora HTTP proxy, for the benchmarks only: every request goes to the origin through
//! pingora's own proxy loop, with no robots.txt, classification, metrics or log. It measures
//! what pingora's HTTP/1 path costs by itself, on the same allocator and runtime as robogate
//! (mimalloc, one thread, no work stealing), beside robogate and nginx (BENCHMARKS.md, "Stop 22"):
//!
//!     cargo build --release --example bare_pingora
//!     bash ../shared/bench/loadbench.sh 18080 "$PWD/target/release/examples/bare_pingora 127.0.0.1:18080"
//!
//! Arguments: the listen address (127.0.0.1:18080), the origin address (127.0.0.1:$ORIGIN_PORT,
//! else 127.0.0.1:18000, loadbench's origin).

use async_trait::async_trait;
use pingora_core::server::configuration::ServerConf;
use pingora_core::server::Server;
use pingora_core::upstreams::peer::HttpPeer;
use pingora_proxy::{ProxyHttp, Session};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Bare {
    origin: String,
}

#[async_trait]
impl ProxyHttp for Bare {
    type CTX = ();

    fn new_ctx(&self) {}

    async fn upstream_peer(
        &self,
        _session: &mut Session,
        _ctx: &mut (),
    ) -> pingora_error::Result<Box<HttpPeer>> {
        Ok(Box::new(HttpPeer::new(
            self.origin.as_str(),
            false,
            String::new(),
        )))
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:18080".into());
    let origin = args.next().unwrap_or_else(|| {
        let port = std::env::var("ORIGIN_PORT").unwrap_or_else(|_| "18000".into());
        format!("127.0.0.1:{port}")
    });
    let conf = ServerConf {
        threads: 1,
        work_stealing: false,
        ..ServerConf::default()
    };
    let mut server = Server::new_with_opt_and_conf(None, conf);
    server.bootstrap();
    let mut service = pingora_proxy::http_proxy_service(&server.configuration, Bare { origin });
    service.add_tcp(&listen);
    server.add_service(service);
    server.run_forever();
}
