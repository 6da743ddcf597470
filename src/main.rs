//! The `nudt` command line: `demo`, `bench`, `transform`, `gen` and `tune`.
//!
//! Every command lives in its own module under `cli/`; this file only hands over the exit code.

mod cli;

/// Counts the live heap for `nudt bench --soak` ([`cli::heap`]).
#[global_allocator]
static ALLOC: cli::heap::Counting = cli::heap::Counting;

fn main() {
    std::process::exit(cli::main());
}
