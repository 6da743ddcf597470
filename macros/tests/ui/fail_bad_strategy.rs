nudt_macros::spreader! { dim = 3, width = 4, strategy = fastest }

fn main() {}
