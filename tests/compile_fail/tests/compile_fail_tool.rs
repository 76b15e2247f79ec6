//! Misuses of `#[derive(Tool)]` fail to compile with messages that say what to do.

#[test]
fn derive_tool_misuse_is_a_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/tool/*.rs");
}
