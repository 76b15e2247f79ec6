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
