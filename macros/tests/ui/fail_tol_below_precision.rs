nudt_macros::spreader! { dim = 1, tol = 1e-9, precision = f32 }

fn main() {}
