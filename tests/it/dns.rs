//! A real DNS server on 127.0.0.1 (UDP) answering PTR, A and AAAA queries from an in-memory zone
//! and NXDOMAIN otherwise, for tests of reverse DNS. Messages are parsed and built with
//! hickory-proto (re-exported by hickory-resolver), never encoded by hand. It runs on its own
//! thread, so sync and async tests alike can use it. Answers are small, so it never truncates
//! and needs no TCP.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use hickory_resolver::proto::op::{Message, MessageType, OpCode, ResponseCode};
use hickory_resolver::proto::rr::rdata::{PTR, SOA};
use hickory_resolver::proto::rr::{Name, RData, Record, RecordType};

/// The TTL of every record the server serves.
pub const TTL: u32 = 3600;

/// The records a [`DnsServer`] serves.
#[derive(Default, Clone)]
pub struct Zone {
    records: HashMap<Name, Vec<RData>>,
}

impl Zone {
    pub fn new() -> Zone {
        Zone::default()
    }

    /// A PTR record for `ip` (its in-addr.arpa or ip6.arpa name) naming `host`.
    pub fn ptr(mut self, ip: &str, host: &str) -> Zone {
        let ip: IpAddr = ip.parse().expect("an IP address");
        self.records
            .entry(Name::from(ip))
            .or_default()
            .push(RData::PTR(PTR(fqdn(host))));
        self
    }

    /// An A (IPv4) or AAAA (IPv6) record for `host`.
    pub fn addr(mut self, host: &str, ip: &str) -> Zone {
        let ip: IpAddr = ip.parse().expect("an IP address");
        self.records
            .entry(fqdn(host))
            .or_default()
            .push(RData::from(ip));
        self
    }
}

fn fqdn(host: &str) -> Name {
    let mut name = Name::from_ascii(host).expect("a host name");
    name.set_fqdn(true);
    name.to_lowercase()
}

/// How the server treats every query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// From the zone: the records, NODATA for a known name, NXDOMAIN otherwise.
    Answer,
    /// SERVFAIL to everything.
    ServFail,
    /// Reads queries and never answers.
    Silent,
}

struct Shared {
    mode: Mutex<Mode>,
    /// Every query seen, in order.
    seen: Mutex<Vec<(Name, RecordType)>>,
    stopping: std::sync::atomic::AtomicBool,
}

/// A DNS server on `127.0.0.1:<port>` (UDP); stopped on drop.
pub struct DnsServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl DnsServer {
    /// Serves `zone` on a fresh port.
    pub fn start(zone: Zone) -> DnsServer {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 (udp)");
        let addr = socket.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            mode: Mutex::new(Mode::Answer),
            seen: Mutex::new(Vec::new()),
            stopping: Default::default(),
        });
        let serving = Arc::clone(&shared);
        let thread = std::thread::spawn(move || serve(&socket, &zone, &serving));
        DnsServer {
            addr,
            shared,
            thread: Some(thread),
        }
    }

    pub fn set_mode(&self, mode: Mode) {
        *self
            .shared
            .mode
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = mode;
    }

    /// How many queries of `record_type` the server has received.
    pub fn queries(&self, record_type: RecordType) -> usize {
        let seen = self
            .shared
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        seen.iter().filter(|(_, t)| *t == record_type).count()
    }

    /// Stops serving and closes the socket (queries then meet a closed port).
    pub fn stop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.shared
            .stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the blocked receive with one datagram.
        if let Ok(waker) = UdpSocket::bind("127.0.0.1:0") {
            let _ = waker.send_to(b"", self.addr);
        }
        let _ = thread.join();
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn serve(socket: &UdpSocket, zone: &Zone, shared: &Shared) {
    let mut buf = [0u8; 4096];
    loop {
        let received = socket.recv_from(&mut buf);
        if shared.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let Ok((len, peer)) = received else {
            continue;
        };
        let Ok(request) = Message::from_vec(&buf[..len]) else {
            continue;
        };
        if let Some(query) = request.queries.first() {
            let mut seen = shared.seen.lock().unwrap_or_else(PoisonError::into_inner);
            seen.push((query.name.clone(), query.query_type));
        }
        let mode = *shared.mode.lock().unwrap_or_else(PoisonError::into_inner);
        if mode == Mode::Silent {
            continue;
        }
        let response = respond(&request, zone, mode);
        if let Ok(bytes) = response.to_vec() {
            let _ = socket.send_to(&bytes, peer);
        }
    }
}

fn respond(request: &Message, zone: &Zone, mode: Mode) -> Message {
    let mut response = Message::response(request.metadata.id, OpCode::Query);
    response.metadata.message_type = MessageType::Response;
    response.metadata.recursion_desired = request.metadata.recursion_desired;
    response.metadata.recursion_available = true;
    response.metadata.authoritative = true;
    response.add_queries(request.queries.iter().cloned());
    let Some(query) = request.queries.first() else {
        response.metadata.response_code = ResponseCode::FormErr;
        return response;
    };
    if mode == Mode::ServFail {
        response.metadata.response_code = ResponseCode::ServFail;
        return response;
    }
    let name = query.name.to_lowercase();
    match zone.records.get(&name) {
        Some(records) => {
            let answers = records
                .iter()
                .filter(|r| r.record_type() == query.query_type)
                .map(|r| Record::from_rdata(query.name.clone(), TTL, r.clone()));
            response.add_answers(answers);
        }
        None => response.metadata.response_code = ResponseCode::NXDomain,
    }
    if response.answers.is_empty() {
        response.add_authority(soa());
    }
    response
}

/// The SOA a negative answer carries (its minimum is the negative TTL).
fn soa() -> Record {
    let apex = fqdn("test");
    let soa = SOA::new(
        fqdn("ns.test"),
        fqdn("hostmaster.test"),
        1,
        3600,
        600,
        86400,
        300,
    );
    Record::from_rdata(apex, 300, RData::SOA(soa))
}
