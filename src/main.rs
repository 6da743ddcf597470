//! The `nudt` command line: `demo`, `bench`, `transform`, `gen` and `tune`.
//!
//! Every command lives in its own module under `cli/`; this file only hands over the exit code.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
