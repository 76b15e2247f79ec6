struct Weather {
    city: String,
}

fn main() {
    let mut tools = toolloop::ToolSet::new();
    tools.add::<Weather>().unwrap();
}
