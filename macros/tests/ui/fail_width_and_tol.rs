nudt_macros::spreader! { dim = 1, width = 4, tol = 1e-6 }

fn main() {}
