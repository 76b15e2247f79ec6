#!/usr/bin/env bash
# Compile time of a crate with 50 `#[derive(Tool)]` tools, against the same
# crate with 50 structs deriving only serde's Deserialize and schemars'
# JsonSchema (what a hand-written tool needs at the least).
# Usage: bash toolloop/benches/derive_compile_time.sh   (from the repository root)
set -euo pipefail
root=$(pwd)
work="$root/target/derive-compile-bench"
rm -rf "$work" && mkdir -p "$work"

make_crate() { # name, kind (tool|plain)
  local dir="$work/$1"
  mkdir -p "$dir/src"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false
[dependencies]
toolloop = { path = "$root/toolloop" }
serde = { version = "1", features = ["derive"] }
schemars = "1"
[workspace]
TOML
  {
    echo "#![allow(dead_code, clippy::unused_async)]"
    for i in $(seq 1 50); do
      if [ "$2" = tool ]; then
        cat <<RS
/// Tool number $i: looks something up.
#[derive(toolloop::Tool)]
pub struct Tool$i {
    /// What to look up.
    pub query: String,
    /// How many results.
    pub limit: Option<u32>,
    /// Tags to filter by.
    pub tags: Vec<String>,
}
impl Tool$i {
    async fn run(self) -> Result<String, std::convert::Infallible> { Ok(self.query) }
}
RS
      else
        cat <<RS
/// Tool number $i: looks something up.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Tool$i {
    /// What to look up.
    pub query: String,
    /// How many results.
    pub limit: Option<u32>,
    /// Tags to filter by.
    pub tags: Vec<String>,
}
RS
      fi
    done
  } > "$dir/src/lib.rs"
}

measure() { # name
  local dir="$work/$1"
  (cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build --quiet 2>/dev/null)   # dependencies, once
  local best=""
  for _ in 1 2 3; do
    touch "$dir/src/lib.rs"
    local start end
    start=$(date +%s.%N)
    (cd "$dir" && CARGO_TARGET_DIR="$work/target" cargo build --quiet)
    end=$(date +%s.%N)
    local t; t=$(echo "$end - $start" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  printf '%s: %.2f s (best of 3, debug, dependencies already built)\n' "$1" "$best"
}

make_crate fifty_derived_tools tool
make_crate fifty_serde_schemars_structs plain
measure fifty_derived_tools
measure fifty_serde_schemars_structs
