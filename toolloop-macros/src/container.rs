//! What `#[serde(...)]` on the tool struct asks of the hidden argument
//! type the derive generates, and which of those attributes cannot work
//! for a tool.
//!
//! The derive copies the struct's fields into a hidden type that derives
//! `Deserialize` and `JsonSchema`, so container attributes that name the
//! struct itself (`default`, `from`, `try_from`) need a bridge from the
//! struct to that type; the others pass through untouched.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta, Path, Token, Type};

use crate::ctxt::Ctxt;

/// A bridge from the user's struct to the hidden argument type.
pub(crate) enum Bridge {
    /// `#[serde(default)]`: the struct's `Default` (errors point at the attribute).
    Default(proc_macro2::Span),
    /// `#[serde(default = "path")]`: a function returning the struct.
    DefaultWith(Path),
    /// `#[serde(from = "Type")]`: the struct's `From<Type>`.
    From(Type),
    /// `#[serde(try_from = "Type")]`: the struct's `TryFrom<Type>`.
    TryFrom(Type),
}

/// The container `#[serde]` attributes to pass on, and the bridges they need.
#[derive(Default)]
pub(crate) struct Container {
    pub(crate) serde: Vec<TokenStream>,
    pub(crate) bridges: Vec<Bridge>,
}

impl Container {
    /// Whether the arguments are deserialised through another type, so the
    /// fields themselves need neither `Deserialize` nor `JsonSchema`.
    pub(crate) fn converts(&self) -> bool {
        self.bridges.iter().any(|bridge| matches!(bridge, Bridge::From(_) | Bridge::TryFrom(_)))
    }
}

pub(crate) fn parse(cx: &mut Ctxt, attrs: &[Attribute]) -> Container {
    let mut out = Container::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let Ok(items) = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) else {
            // Not the shape serde takes: let serde report it.
            out.serde.push(quote!(#attr));
            continue;
        };
        let mut kept = Vec::new();
        for item in items {
            let key = item.path().get_ident().map(ToString::to_string).unwrap_or_default();
            match (key.as_str(), &item) {
                ("default", Meta::Path(path)) => {
                    out.bridges.push(Bridge::Default(path.span()));
                    kept.push(quote!(#item));
                }
                ("default", Meta::NameValue(nv)) => {
                    if let Some(path) = string_value(cx, &nv.value, "a function path") {
                        out.bridges.push(Bridge::DefaultWith(path));
                    }
                    // serde calls the hidden type's `Default`, which calls the function.
                    let default = &nv.path;
                    kept.push(quote!(#default));
                }
                ("from", Meta::NameValue(nv)) => {
                    if let Some(ty) = string_value(cx, &nv.value, "a type") {
                        out.bridges.push(Bridge::From(ty));
                    }
                    kept.push(quote!(#item));
                }
                ("try_from", Meta::NameValue(nv)) => {
                    if let Some(ty) = string_value(cx, &nv.value, "a type") {
                        out.bridges.push(Bridge::TryFrom(ty));
                    }
                    kept.push(quote!(#item));
                }
                ("transparent", _) => cx.error_spanned_by(
                    &item,
                    "#[serde(transparent)] would make the tool's arguments the value of its one field, but a \
                     tool's arguments are a JSON object: remove it, or put #[serde(flatten)] on the field to \
                     take that field's own fields as the arguments",
                ),
                ("untagged" | "content" | "variant_identifier" | "field_identifier", _) => cx.error_spanned_by(
                    &item,
                    format!(
                        "#[serde({key})] is for enums, and a tool is a struct whose fields are its arguments: \
                         to accept one of several shapes, put an enum in a field"
                    ),
                ),
                ("remote", _) => cx.error_spanned_by(
                    &item,
                    "#[serde(remote)] does not apply to a tool: derive Tool on a struct of your own whose \
                     fields are the arguments",
                ),
                ("crate", _) => cx.error_spanned_by(
                    &item,
                    "#[derive(Tool)] reaches serde through toolloop, so it needs no #[serde(crate)]; for a \
                     renamed toolloop dependency write #[tool(crate = \"...\")]",
                ),
                _ => kept.push(quote!(#item)),
            }
        }
        if !kept.is_empty() {
            out.serde.push(quote!(#[serde(#(#kept),*)]));
        }
    }
    out
}

/// The contents of a string literal parsed as `T` (`"path::to::f"`, `"Type"`).
fn string_value<T: syn::parse::Parse>(cx: &mut Ctxt, value: &Expr, what: &str) -> Option<T> {
    match value {
        Expr::Lit(ExprLit { lit: Lit::Str(literal), .. }) => match literal.parse() {
            Ok(parsed) => Some(parsed),
            Err(error) => {
                cx.push(error);
                None
            }
        },
        other => {
            cx.error_spanned_by(other, format!("serde takes {what} here as a string: \"...\""));
            None
        }
    }
}

/// Whether a field's `#[serde]`/`#[schemars]` attributes change how it is
/// read or described (`with`, `deserialize_with`, `schema_with`, `skip`,
/// `default`, `flatten`...), so the derive leaves the field's type as it is.
pub(crate) fn field_overrides_traits(attrs: &[&Attribute]) -> bool {
    const KEYS: &[&str] =
        &["with", "deserialize_with", "schema_with", "skip", "skip_deserializing", "default", "flatten"];
    fn mentions(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => KEYS.iter().any(|key| ident == key),
            TokenTree::Group(group) => mentions(group.stream()),
            _ => false,
        })
    }
    attrs.iter().any(|attr| match &attr.meta {
        Meta::List(list) => mentions(list.tokens.clone()),
        _ => false,
    })
}
