//! Agent configurations that make no sense fail to compile, each with a
//! message that says what to do (snapshots under `tests/ui/agent/`).

#[test]
fn invalid_agent_configurations_do_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/agent/*.rs");
}
