//! The README's `[dependencies]` block is this crate's, so what the README
//! tells a user to copy is what CI builds.

use std::path::Path;

/// The entries of the first TOML block after the heading `## Add it to your project`.
fn readme_block() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme.split("## Add it to your project").nth(1).expect("the README's section");
    let block = section.split("```toml").nth(1).unwrap().split("```").next().unwrap();
    dependency_lines(block)
}

/// The entries of the `[dependencies]` table in `text`, without comments.
fn dependency_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .skip_while(|line| *line != "[dependencies]")
        .skip(1)
        .take_while(|line| !line.starts_with('['))
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_block_is_this_crates_dependencies() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let mine: Vec<String> = dependency_lines(&manifest)
        .into_iter()
        .map(|line| if line.starts_with("toolloop ") { README_TOOLLOOP.to_owned() } else { line })
        .collect();
    assert_eq!(readme_block(), mine);
}

/// The README's toolloop line: a path dependency on a clone of the
/// repository next to the user's project (the crate is not on crates.io).
/// This crate's own line points at the same crate from inside the workspace.
const README_TOOLLOOP: &str = r#"toolloop = { path = "../toolloop/toolloop" }"#;
