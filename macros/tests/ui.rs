//! `spreader!` at compile time: bad input is a compile error naming the bad argument
//! (expected messages in tests/ui/*.stderr). Good input compiling and running right is the
//! facade's `tests/suite/spreader_macro.rs`. The compile-fail cases live here, where trybuild's
//! project needs only this crate's dependencies, not the runtime's and the CLI's.

#[test]
fn spreader_macro_refuses_bad_arguments() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail_*.rs");
}
