/// Send the form.
#[derive(toolloop::Tool)]
#[tool(name = "submit")]
struct SendForm {
    form_id: String,
}

fn main() {}
