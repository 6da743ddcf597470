nudt_macros::spreader! { dim = 2, width = 5, colour = red }

fn main() {}
