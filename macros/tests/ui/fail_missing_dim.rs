nudt_macros::spreader! { width = 4 }

fn main() {}
