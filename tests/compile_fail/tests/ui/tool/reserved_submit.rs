/// Submit the form.
#[derive(toolloop::Tool)]
struct Submit {
    form_id: String,
}

fn main() {}
