nudt_macros::spreader! { dim = 4, width = 4 }

fn main() {}
