//! Claimed identities, checked against their operators' published proof (layer 3, beside
//! `state/`): published IP ranges (the pure prefix table [`crate::identity::ranges`] the policy
//! holds), forward-confirmed reverse DNS ([`fcrdns`], async, cached) and Web Bot Auth signatures ([`signature`], key directories
//! fetched and cached). What they establish reaches `Policy::decide` as an
//! [`crate::identity::Identity`]. Never blocks a request beyond `verify.timeout`: an unfinished
//! check is `unverified` (fail open, counted).

pub mod fcrdns;
pub mod signature;
