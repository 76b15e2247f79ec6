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
        .map(|line| if line.starts_with("toolloop ") { format!("toolloop = \"{}\"", minor_version()) } else { line })
        .collect();
    assert_eq!(readme_block(), mine);
}

/// `0.1` for toolloop 0.1.x: the requirement a user writes.
fn minor_version() -> String {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")).unwrap();
    let version = manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("the workspace version");
    version.rsplit_once('.').expect("major.minor.patch").0.to_owned()
}
