//! robogate: a reverse proxy that makes robots.txt mean something.
//!
//! The pure core — [`robots`] (parse, canonicalize, match), [`classify`] (who is asking) and
//! [`policy`] (one immutable snapshot, one `decide`) — knows nothing of sockets. [`config`]
//! compiles files into a policy, [`reload`] swaps it live, [`proxy`] is the pingora glue, and
//! [`metrics`] names every counter.

pub mod access_log;
pub mod admin;
pub mod alloc;
pub mod charges;
pub mod classify;
pub mod cli;
pub mod config;
pub mod decide;
pub mod evidence;
pub mod facts;
pub mod fingerprint;
pub mod forwarded;
pub mod h1;
pub mod identity;
pub mod keyword;
pub mod metrics;
pub mod policy;
pub mod problem;
pub mod proxy;
pub mod reload;
pub mod robots;
pub mod serve;
pub mod state;
pub mod tls;
pub mod verify;
