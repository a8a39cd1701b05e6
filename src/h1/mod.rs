//! robogate's HTTP/1 transport: the room that reads client connections and speaks to the
//! origin, with no knowledge of robots.txt or policies. It imports nothing of [`crate::proxy`]:
//! the proxy implements [`Service`], which the connection loop calls to answer a request.
//!
//! - [`conn`]: the client connection loop; every request head is read there, bounded.
//! - [`head`]: request heads: whole or not, plain (the fast path's) or not, where a request ends.
//! - [`fields`]: the rules a request's fields must pass before it is judged.
//! - [`body`]: a client stream lent to pingora's session for one request, and the strict
//!   chunked scanner.
//! - [`exchange`], [`origin`], [`pool`]: the fast path's client to the origin and its pool.
//! - [`downstream`]: where an answer goes (the loop's [`Reply`], or pingora's session).
//! - [`deadline`]: one timer per connection.

pub mod body;
pub mod conn;
pub mod deadline;
pub mod downstream;
pub mod exchange;
pub mod fields;
pub mod head;
pub mod origin;
pub mod pool;
mod wrap;

pub use conn::{not_taken, After, Conn, Ended, Lent, Limits, Reply, Service};
pub use downstream::Downstream;
pub use exchange::{exchange, Endpoint};
pub use origin::OriginHead;
pub use pool::OriginPool;
