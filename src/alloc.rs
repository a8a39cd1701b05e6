//! Allocator housekeeping for the mimalloc global allocator the binary installs (`main.rs`).
//!
//! Loading a config allocates a few MiB of short-lived parse data (TOML, the catalog). mimalloc
//! keeps freed pages for reuse, and at idle they stay resident: 37 MiB RSS instead of 18 MiB
//! with the shipped conf (BENCHMARKS.md, "Memory"). After each load the loading thread hands
//! them back.

/// Returns the calling thread's freed-but-kept memory to the OS. Cheap when there is nothing
/// to return; harmless when mimalloc is not the global allocator (a library user's binary).
pub fn release_freed_memory() {
    // SAFETY: `mi_collect` takes no pointers and may be called at any time from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
