//! Derive macros for toolloop. Use them through the `toolloop` crate, which
//! documents them (`cargo doc --open`).

mod arguments;
mod ast;
mod attr;
mod check;
mod container;
mod ctxt;
mod expand;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `toolloop::Tool`; documented on the re-export in `toolloop`.
#[proc_macro_derive(Tool, attributes(tool, serde, schemars))]
pub fn derive_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_tool(&input).into()
}
