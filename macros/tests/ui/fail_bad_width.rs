nudt_macros::spreader! { dim = 2, width = 17 }

fn main() {}
