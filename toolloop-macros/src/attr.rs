//! Parsing `#[tool(...)]` and doc attributes.

use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Path, Token, Type};

use crate::ctxt::Ctxt;

/// The keys `#[tool(...)]` accepts on a struct.
const KEYS: &str = "`name`, `description`, `full_doc`, `state`, `timeout`, `crate`";

/// What `#[tool(...)]` says about the tool.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) state: Option<Type>,
    pub(crate) timeout: Option<(LitStr, u64)>,
    pub(crate) krate: Option<Path>,
    /// `#[tool(full_doc)]`: send the whole doc comment, not its summary.
    pub(crate) full_doc: Option<Path>,
    /// Whether `description` was given, even with a value that was rejected
    /// (so it is not reported missing as well).
    pub(crate) description_given: bool,
}

impl ToolAttrs {
    pub(crate) fn parse(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("tool")) {
            if !matches!(attr.meta, Meta::List(_)) {
                cx.error_spanned_by(attr, format!("write #[tool(key = value, ...)]; the keys are {KEYS}"));
                continue;
            }
            let result = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                if !KEY_NAMES.contains(&key.as_str()) {
                    let path = &meta.path;
                    let shown = quote::quote!(#path).to_string().replace(' ', "");
                    cx.error_spanned_by(path, format!("unknown key `{shown}` in #[tool(...)]; the keys are {KEYS}"));
                    return skip_value(&meta);
                }
                if key == "full_doc" {
                    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
                        cx.error_spanned_by(&meta.path, format!("`full_doc` takes no value: {}", example(&key)));
                        return skip_value(&meta);
                    }
                    set_once(cx, &meta.path, &mut out.full_doc, meta.path.clone());
                    return Ok(());
                }
                if !meta.input.peek(Token![=]) {
                    out.description_given |= key == "description";
                    cx.error_spanned_by(&meta.path, format!("`{key}` needs a value: {}", example(&key)));
                    return skip_value(&meta);
                }
                let value = meta.value()?;
                match key.as_str() {
                    "name" => {
                        if let Some(literal) = string(cx, &key, value)? {
                            set_once(cx, &meta.path, &mut out.name, literal);
                        }
                    }
                    "description" => {
                        out.description_given = true;
                        if let Some(literal) = string(cx, &key, value)? {
                            set_once(cx, &meta.path, &mut out.description, literal);
                        }
                    }
                    "state" => {
                        // A type, or a string holding one as serde's `from = "Type"` takes it.
                        let ty = if value.peek(LitStr) { value.parse::<LitStr>()?.parse()? } else { value.parse()? };
                        set_once(cx, &meta.path, &mut out.state, ty);
                    }
                    "timeout" => {
                        if let Some(literal) = string(cx, &key, value)? {
                            match parse_duration_millis(&literal.value()) {
                                Some(0) => cx.error_spanned_by(
                                    &literal,
                                    "a zero `timeout` would fail every call; give the tool time to run, \
                                     or leave `timeout` out to use the tool set's default",
                                ),
                                Some(millis) => set_once(cx, &meta.path, &mut out.timeout, (literal, millis)),
                                None => cx.error_spanned_by(
                                    &literal,
                                    "`timeout` takes a duration like \"500ms\", \"30s\" or \"2m\"",
                                ),
                            }
                        }
                    }
                    _ => {
                        let path =
                            if value.peek(LitStr) { value.parse::<LitStr>()?.parse()? } else { value.parse()? };
                        set_once(cx, &meta.path, &mut out.krate, path);
                    }
                }
                Ok(())
            });
            if let Err(error) = result {
                cx.push(syn::Error::new(
                    error.span(),
                    format!("{error}; write #[tool(key = value, ...)] with the keys {KEYS}"),
                ));
            }
        }
        out
    }
}

/// The keys of #[tool(...)], as matched.
const KEY_NAMES: &[&str] = &["name", "description", "full_doc", "state", "timeout", "crate"];

/// How `key` is written.
fn example(key: &str) -> &'static str {
    match key {
        "name" => "#[tool(name = \"get_weather\")]",
        "description" => "#[tool(description = \"What the tool does and when to use it.\")]",
        "full_doc" => {
            "#[tool(full_doc)] sends the whole doc comment, not only the paragraphs before its first heading or code block"
        }
        "state" => "#[tool(state = MyState)], and `run` takes `state: &MyState`",
        "timeout" => "#[tool(timeout = \"30s\")] (units: ms, s, m)",
        _ => "#[tool(crate = \"path::to::toolloop\")]",
    }
}

/// A string literal value, or an error saying how `key` is written.
fn string(cx: &mut Ctxt, key: &str, value: ParseStream<'_>) -> syn::Result<Option<LitStr>> {
    if value.peek(LitStr) {
        return value.parse().map(Some);
    }
    let expr: Expr = value.parse()?;
    cx.error_spanned_by(&expr, format!("`{key}` takes a string: {}", example(key)));
    Ok(None)
}

/// Skips whatever follows a key (`= value` or `(...)`), so that the
/// remaining keys are still checked.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _: proc_macro2::Group = meta.input.parse()?;
    }
    Ok(())
}

fn set_once<T>(cx: &mut Ctxt, key: &Path, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        let name = key.get_ident().map(ToString::to_string).unwrap_or_default();
        cx.error_spanned_by(key, format!("duplicate `{name}` in #[tool(...)]; give it once"));
    } else {
        *slot = Some(value);
    }
}

/// Parses "500ms", "30s" or "2m" into milliseconds.
fn parse_duration_millis(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60_000)
    } else {
        return None;
    };
    number.trim().parse::<u64>().ok()?.checked_mul(scale)
}

/// One line of a doc comment: a literal (leading space removed) or an
/// expression such as `include_str!("...")`.
pub(crate) enum DocLine {
    Literal(String),
    Expr(Expr),
}

/// The doc comment lines of an item, in order.
pub(crate) fn docs(attrs: &[Attribute]) -> Vec<DocLine> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) => Some(match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                    let line = s.value();
                    DocLine::Literal(line.strip_prefix(' ').unwrap_or(&line).to_owned())
                }
                other => DocLine::Expr(other.clone()),
            }),
            _ => None,
        })
        .collect()
}

/// Whether the doc lines say anything.
pub(crate) fn has_text(docs: &[DocLine]) -> bool {
    docs.iter().any(|line| match line {
        DocLine::Literal(text) => !text.trim().is_empty(),
        DocLine::Expr(_) => true,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_duration_millis;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration_millis("500ms"), Some(500));
        assert_eq!(parse_duration_millis("30s"), Some(30_000));
        assert_eq!(parse_duration_millis("2m"), Some(120_000));
        assert_eq!(parse_duration_millis("0s"), Some(0));
        assert_eq!(parse_duration_millis("soon"), None);
        assert_eq!(parse_duration_millis("5"), None);
    }
}
