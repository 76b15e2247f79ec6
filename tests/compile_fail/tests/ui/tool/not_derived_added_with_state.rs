struct Db;

struct CountRows {
    table: String,
}

fn main() {
    let mut tools = toolloop::ToolSet::new();
    tools.add_with_state::<CountRows>(Db).unwrap();
}
