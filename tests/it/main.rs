//! robogate's one integration test binary: the real server, real origins, real clients.

mod dns;
mod support;

mod access_log;
mod audit;
mod behaviour;
mod book;
mod classify_corpus;
mod cli;
mod clients;
mod decide;
mod differential;
mod disguise;
mod enforce;
mod evidence;
mod fairness;
mod forward;
mod generate_props;
mod metrics;
mod operator;
mod preferences;
mod proxy;
mod ranges;
mod redbot;
mod reload;
mod request_head;
mod robots_conformance;
mod robots_props;
mod shared_state;
mod signature;
mod sources;
mod status;
mod tls;
mod transport;
mod verify;
mod verify_dns;
