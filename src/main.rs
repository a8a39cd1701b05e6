use std::process::ExitCode;

use clap::Parser;

/// mimalloc: faster than the system allocator on the proxy path (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` in the mimalloc bundled by libmimalloc-sys 0.1.49 (v3.3.2;
/// Cargo.toml pins that version and a test below checks it). The crate exports no constant for
/// this option.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Runs before `main`, before the first allocation creates mimalloc's first arena: arenas
/// committed lazily give freed memory back to the OS at once when
/// [`robogate::alloc::release_freed_memory`] asks, rather than keeping it resident until memory
/// is short (idle RSS 37 -> 18 MiB with the shipped conf; no measurable throughput change).
extern "C" fn tune_allocator() {
    // SAFETY: sets one integer option; takes no pointers.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) }
}

#[used]
#[link_section = ".init_array"]
static TUNE_ALLOCATOR: extern "C" fn() = tune_allocator;

fn main() -> ExitCode {
    robogate::cli::run(robogate::cli::Cli::parse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allocator_option_is_the_one_we_mean() {
        // A different mimalloc may number its options differently: re-check the enum in
        // `mimalloc.h` before changing this.
        assert_eq!(unsafe { libmimalloc_sys::mi_version() }, 30302);
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_ARENA_EAGER_COMMIT) },
            0,
            "set before main"
        );
    }
}
