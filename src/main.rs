//! The `tributary` binary: a thin wrapper over [`tributary::cli`].
//!
//! Owns nothing but the process exit code and the global allocator; all
//! behaviour lives in the library.

/// mimalloc instead of glibc's malloc: query execution allocates many small
/// values per row, and glibc's malloc/free was about 40% of a join's
/// profile (decision 011, `docs/BENCHMARKS.md`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(tributary::cli::main_with_args());
}
