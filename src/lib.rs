pub use nudt_runtime::*;
