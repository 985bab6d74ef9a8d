//! The `tributary` binary: a thin wrapper over [`tributary::main_with_args`].
//!
//! Owns nothing but the process exit code and the global allocator; all
//! behaviour lives in the library.

/// mimalloc instead of glibc's malloc: query execution allocates many small
/// values per row, and glibc's malloc/free was about 40% of a join's
/// profile (decision 011, `docs/BENCHMARKS.md`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's collect: frees what this thread's heap no longer uses
    /// and returns freed pages to the system (linked in by `mimalloc`).
    fn mi_collect(force: bool);
}

/// Return the calling thread's freed memory to the system (after a
/// statement that held many rows: decision 023).
#[allow(unsafe_code, reason = "mi_collect is a foreign function")]
fn collect() {
    // SAFETY: mi_collect takes no pointers and may be called from any
    // thread at any time.
    unsafe { mi_collect(true) }
}

fn main() {
    tributary::set_release_hook(collect);
    std::process::exit(tributary::main_with_args());
}
