//! The `tributary` binary: a thin wrapper over [`tributary::cli`].
//!
//! Owns nothing but the process exit code; all behaviour lives in the library.

fn main() {
    std::process::exit(tributary::cli::main_with_args());
}
