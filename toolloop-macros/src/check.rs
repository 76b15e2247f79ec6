//! Checks that the tool is one providers will accept.

use proc_macro2::Span;
use syn::LitStr;

use crate::ctxt::Ctxt;

/// The name the framework gives its own submit tool in reflection mode.
const RESERVED: &[&str] = &["submit"];

/// The tool's name, checked: from `#[tool(name = ...)]` or the `snake_case` ident.
pub(crate) fn tool_name(cx: &mut Ctxt, ident: &syn::Ident, explicit: Option<&LitStr>) -> String {
    let (name, span) = match explicit {
        Some(literal) => (literal.value(), literal.span()),
        None => (snake_case(&ident.to_string()), ident.span()),
    };
    let how = if explicit.is_some() { "" } else { "; choose another with #[tool(name = \"...\")]" };
    if name.is_empty() || name.len() > 64 {
        cx.push(syn::Error::new(
            span,
            format!("tool name `{name}` must be 1 to 64 characters long, as providers require{how}"),
        ));
    } else if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        cx.push(syn::Error::new(
            span,
            format!("tool name `{name}` contains `{bad}`: providers accept only letters, digits, `_` and `-`{how}"),
        ));
    }
    if RESERVED.contains(&name.as_str()) {
        cx.push(syn::Error::new(
            span,
            format!(
                "tool name `{name}` is reserved: reflection agents add their own `{name}` tool; \
                 choose another with #[tool(name = \"...\")]"
            ),
        ));
    }
    name
}

/// Reports a tool without a description.
pub(crate) fn missing_description(cx: &mut Ctxt, span: Span) {
    cx.push(syn::Error::new(
        span,
        "a tool needs a description so the model knows when to call it: \
         add a doc comment (`/// ...`) to the struct, or #[tool(description = \"...\")]",
    ));
}

/// Reports a tool with both a doc comment and `#[tool(description = ...)]`:
/// the model would be sent only the attribute, silently.
pub(crate) fn description_twice(cx: &mut Ctxt, literal: &LitStr) {
    cx.push(syn::Error::new(
        literal.span(),
        "this tool has both a doc comment and #[tool(description = \"...\")], and the model is sent one \
         description: remove the attribute to send the doc comment's summary, or turn the doc comment \
         into `//` comments to send the attribute",
    ));
}

/// Crates that `#[tool(crate = ...)]` is mistaken for.
const NOT_TOOLLOOP: &[&str] = &["serde", "serde_json", "schemars", "toolloop_macros", "std", "core", "alloc"];

/// Reports a `#[tool(crate = ...)]` path that is certainly not toolloop;
/// true when it did. (Any other wrong path fails at the one import the
/// derive writes through it.)
pub(crate) fn crate_path(cx: &mut Ctxt, path: &syn::Path) -> bool {
    let first = path.segments.first().map(|segment| segment.ident.to_string()).unwrap_or_default();
    let single = path.segments.len() == 1;
    let message = if single && NOT_TOOLLOOP.contains(&first.as_str()) {
        format!("`{first}` is not toolloop: ")
    } else if first == "toolloop" && !single {
        "a path inside toolloop is not toolloop itself: ".to_owned()
    } else {
        return false;
    };
    cx.error_spanned_by(
        path,
        format!(
            "{message}#[tool(crate = \"...\")] names the toolloop crate as your Cargo.toml calls it \
             (`tl` for `tl = {{ package = \"toolloop\", .. }}`); leave it out when it is `toolloop`"
        ),
    );
    true
}

/// The derive's own items (`__ToolArguments`, `__toolloop`...) are named
/// `__Tool...`; a type of the user's named so would be shadowed by them.
pub(crate) fn reserved_names(cx: &mut Ctxt, input: &syn::DeriveInput) {
    fn visit(cx: &mut Ctxt, tokens: proc_macro2::TokenStream) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Ident(ident)
                    if ident.to_string().to_ascii_lowercase().starts_with("__tool") =>
                {
                    cx.error_spanned_by(
                        &ident,
                        format!(
                            "`{ident}` is a name #[derive(Tool)] keeps for the code it generates (names beginning \
                             with `__Tool`): rename your type"
                        ),
                    );
                }
                proc_macro2::TokenTree::Group(group) => visit(cx, group.stream()),
                _ => {}
            }
        }
    }
    let ident = &input.ident;
    visit(cx, quote::quote!(#ident));
    if let syn::Data::Struct(data) = &input.data {
        for field in &data.fields {
            let ty = &field.ty;
            visit(cx, quote::quote!(#ty));
        }
    }
}

/// `GetWeather` -> `get_weather`, `HTTPRequest` -> `http_request`.
pub(crate) fn snake_case(ident: &str) -> String {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let previous = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if previous != '_' && (previous.is_lowercase() || previous.is_ascii_digit() || next_is_lower) {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn snake_case_splits_words() {
        assert_eq!(snake_case("GetWeather"), "get_weather");
        assert_eq!(snake_case("HTTPRequest"), "http_request");
        assert_eq!(snake_case("Add"), "add");
        assert_eq!(snake_case("Search2Docs"), "search2_docs");
        assert_eq!(snake_case("already_snake"), "already_snake");
    }
}
