//! `nudt::spreader!` at compile time: good input compiles and runs; bad input is a compile
//! error naming the bad argument (expected messages in tests/ui/*.stderr).

#[test]
fn spreader_macro_ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass_*.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}
