//! Parsing `#[tool(...)]` and doc attributes.

use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Path, Type};

use crate::ctxt::Ctxt;

/// The keys `#[tool(...)]` accepts on a struct.
const KEYS: &str = "`name`, `description`, `state`, `timeout`, `crate`";

/// What `#[tool(...)]` says about the tool.
#[derive(Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) state: Option<Type>,
    pub(crate) timeout: Option<(LitStr, u64)>,
    pub(crate) krate: Option<Path>,
}

impl ToolAttrs {
    pub(crate) fn parse(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = Self::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("tool")) {
            let result = attr.parse_nested_meta(|meta| {
                let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
                match key.as_str() {
                    "name" => set_once(cx, &meta.path, &mut out.name, meta.value()?.parse()?),
                    "description" => set_once(cx, &meta.path, &mut out.description, meta.value()?.parse()?),
                    "state" => set_once(cx, &meta.path, &mut out.state, meta.value()?.parse()?),
                    "timeout" => {
                        let literal: LitStr = meta.value()?.parse()?;
                        match parse_duration_millis(&literal.value()) {
                            Some(millis) => set_once(cx, &meta.path, &mut out.timeout, (literal, millis)),
                            None => cx.error_spanned_by(
                                &literal,
                                "`timeout` takes a duration like \"500ms\", \"30s\" or \"2m\"",
                            ),
                        }
                    }
                    "crate" => {
                        let literal: LitStr = meta.value()?.parse()?;
                        set_once(cx, &meta.path, &mut out.krate, literal.parse()?);
                    }
                    _ => {
                        let path = &meta.path;
                        let shown = quote::quote!(#path).to_string().replace(' ', "");
                        cx.error_spanned_by(
                            path,
                            format!("unknown key `{shown}` in #[tool(...)]; the keys are {KEYS}"),
                        );
                        // Skip the value so the remaining keys are still checked.
                        if meta.input.peek(syn::Token![=]) {
                            let _: Expr = meta.value()?.parse()?;
                        }
                    }
                }
                Ok(())
            });
            if let Err(error) = result {
                cx.push(error);
            }
        }
        out
    }
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
    let millis = number.trim().parse::<u64>().ok()?.checked_mul(scale)?;
    (millis > 0).then_some(millis)
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
        assert_eq!(parse_duration_millis("0s"), None);
        assert_eq!(parse_duration_millis("soon"), None);
        assert_eq!(parse_duration_millis("5"), None);
    }
}
