nudt_macros::spreader! { dim = 1, width = 4, precision = f16 }

fn main() {}
