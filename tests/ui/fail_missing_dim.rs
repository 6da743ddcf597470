nudt::spreader! { width = 4 }

fn main() {}
