//! What the loader brings from the network (the origin's robots.txt, its address looked up)
//! is handed to the compile, which does no network I/O.

use std::time::Duration;

use super::*;

/// Compiling does no network I/O: a configuration that takes robots.txt from the origin says
/// where to fetch it, the loader fetches, and the compile takes what it was handed.
#[test]
fn the_origins_robots_txt_is_asked_of_the_loader_not_fetched_by_the_compile() {
    let (_dir, conf) =
        write_conf("host = \"x.test\"\nread_timeout = \"30s\"\n[robots]\nsource = \"origin\"\n");
    let written = read(&conf).unwrap();
    let asked = written
        .origin_robots(None, false)
        .expect("no copy yet: due");
    assert_eq!(asked.address, "127.0.0.1:1");
    assert_eq!(asked.host.as_deref(), Some("x.test"));
    assert_eq!(asked.timeout, Duration::from_secs(10), "at most 10 s");
    assert!(asked.tls.is_none());
    let body = b"User-agent: *\nDisallow: /handed-in\n".to_vec();
    let loaded = written
        .compile(
            1,
            None,
            Network {
                robots: Some(origin::Fetched::Rules(body.clone())),
                ..Network::default()
            },
        )
        .unwrap();
    assert_eq!(&loaded.policy.robots.body[..], &body[..]);
    // The copy just compiled is reused by the next load (its refresh is not due)...
    let again = read(&conf).unwrap();
    assert!(again.origin_robots(Some(&loaded.memo), false).is_none());
    // ...unless the loader is told to fetch (a SIGHUP, a start).
    assert!(again.origin_robots(Some(&loaded.memo), true).is_some());
    let reused = again
        .compile(2, Some(&loaded.memo), Network::default())
        .unwrap();
    assert_eq!(&reused.policy.robots.body[..], &body[..]);
    // A file source asks for nothing.
    let (_d, file) = write_conf("");
    assert!(read(&file).unwrap().origin_robots(None, true).is_none());
}

/// Nor does it look up a host: the loader looks up the address it names (an IP address needs
/// no lookup), and the compile takes the answer, or says why there is none.
#[test]
fn the_origins_host_is_looked_up_by_the_loader_not_by_the_compile() {
    let (_dir, conf) = write_conf("");
    assert_eq!(read(&conf).unwrap().origin_lookup(), None, "127.0.0.1:1");
    let named = |address: &str| {
        let text = std::fs::read_to_string(&conf)
            .unwrap()
            .replace("\"127.0.0.1:1\"", &format!("{address:?}"));
        let path = conf.with_file_name(format!("named-{}.toml", address.len()));
        std::fs::write(&path, text).unwrap();
        path
    };
    let host = named("origin.test:8000");
    let written = read(&host).unwrap();
    assert_eq!(written.origin_lookup().as_deref(), Some("origin.test:8000"));
    let socket: std::net::SocketAddr = "192.0.2.7:8000".parse().unwrap();
    let network = |lookup| Network {
        origin_address: Some(lookup),
        ..Network::default()
    };
    let loaded = written.compile(1, None, network(Ok(socket))).unwrap();
    assert_eq!(loaded.upstream.socket, socket);
    assert_eq!(loaded.upstream.address, "origin.test:8000");
    // The lookup's failure is the address's error, on its line.
    let why = "cannot resolve \"origin.test:8000\": no such host".to_owned();
    let Err(err) = read(&host).unwrap().compile(1, None, network(Err(why))) else {
        panic!("a failed lookup compiled");
    };
    assert!(
        err.0.iter().any(|e| e.key == "origin.address"
            && e.line == Some(4)
            && e.message.contains("no such host")),
        "{err}"
    );
    // Not host:port: nothing to look up; the compile says what is wrong.
    assert_eq!(read(&named("origin.test")).unwrap().origin_lookup(), None);
    assert_eq!(read(&named("[::1]:8000")).unwrap().origin_lookup(), None);
}
