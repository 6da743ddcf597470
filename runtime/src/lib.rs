
pub mod support {
    nudt_macros::support! {}
}
pub mod k2 {
    nudt_macros::spreader! { dim = 2, width = 7, precision = f64, support = crate::support }
}
