//! A small model of the struct being derived, keeping spans for errors.

use syn::{Attribute, Data, DeriveInput, Fields, Ident, Type};

use crate::attr::ToolAttrs;
use crate::container::{self, Container};
use crate::ctxt::Ctxt;

pub(crate) struct ToolStruct<'a> {
    pub(crate) ident: &'a Ident,
    /// Whether `#[tool(state = ...)]` was given, so `run` takes the state.
    pub(crate) takes_state: bool,
    /// `#[schemars(...)]` on the struct, passed on untouched.
    pub(crate) schemars: Vec<&'a Attribute>,
    /// `#[serde(...)]` on the struct, checked and bridged.
    pub(crate) serde: Container,
    pub(crate) fields: Vec<Field<'a>>,
}

pub(crate) struct Field<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    /// Doc comments, `#[serde(...)]` and `#[schemars(...)]`, passed on untouched.
    pub(crate) passthrough: Vec<&'a Attribute>,
    /// Whether the type must implement `Deserialize` and `JsonSchema`
    /// itself (not when an attribute says how to read or describe it).
    pub(crate) needs_traits: bool,
}

/// Whether schemars and serde should see `attr` too.
fn is_passthrough(attr: &Attribute) -> bool {
    ["doc", "serde", "schemars"].iter().any(|name| attr.path().is_ident(name))
}

impl<'a> ToolStruct<'a> {
    /// Reads `input`; `None` when its shape cannot be a tool (the reason is in `cx`).
    pub(crate) fn from_input(cx: &mut Ctxt, input: &'a DeriveInput) -> (ToolAttrs, Option<Self>) {
        let attrs = ToolAttrs::parse(cx, &input.attrs);
        crate::check::reserved_names(cx, input);
        let fields = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Some(&named.named),
                Fields::Unnamed(_) => {
                    cx.error_spanned_by(
                        &input.ident,
                        "#[derive(Tool)] needs named fields: the model passes arguments by name, \
                         so write `struct Name { field: Type }`",
                    );
                    None
                }
                Fields::Unit => {
                    cx.error_spanned_by(
                        &input.ident,
                        "#[derive(Tool)] needs a struct with braces: write `struct Name {}` for a tool without arguments",
                    );
                    None
                }
            },
            Data::Enum(data) => {
                cx.error_spanned_by(
                    data.enum_token,
                    "#[derive(Tool)] works on structs whose fields are the tool's arguments, not on enums; \
                     put the enum in a field of a struct",
                );
                None
            }
            Data::Union(data) => {
                cx.error_spanned_by(data.union_token, "#[derive(Tool)] works on structs, not unions");
                None
            }
        };
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(
                &input.generics,
                "#[derive(Tool)] does not support generic structs: a tool has one name and one schema; \
                 write a concrete struct per tool",
            );
        }
        for field in fields.into_iter().flatten() {
            if let Some(reference) = find_reference(&field.ty) {
                cx.error_spanned_by(
                    reference,
                    "a tool argument cannot borrow: the model's arguments are parsed from JSON that does not \
                     outlive the call; use an owned type (`String` for `&str`, `Vec<T>` for `&[T]`)",
                );
            }
            if let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("tool")) {
                cx.error_spanned_by(
                    attr,
                    "#[tool(...)] goes on the struct; describe a field with a doc comment, \
                     or rename it with #[serde(rename = \"...\")]",
                );
            }
        }
        let serde = container::parse(cx, &input.attrs);
        let Some(fields) = fields else { return (attrs, None) };
        let converts = serde.converts();
        let model = Self {
            ident: &input.ident,
            takes_state: attrs.state.is_some(),
            schemars: input.attrs.iter().filter(|a| a.path().is_ident("schemars")).collect(),
            serde,
            fields: fields
                .iter()
                .map(|field| {
                    let passthrough: Vec<_> = field.attrs.iter().filter(|a| is_passthrough(a)).collect();
                    Field {
                        ident: field.ident.as_ref().expect("named field"),
                        ty: &field.ty,
                        needs_traits: !converts && !container::field_overrides_traits(&passthrough),
                        passthrough,
                    }
                })
                .collect(),
        };
        (attrs, Some(model))
    }
}

/// The first reference type in `ty` (`&str`, `Option<&str>`...).
fn find_reference(ty: &Type) -> Option<&syn::TypeReference> {
    match ty {
        Type::Reference(reference) => Some(reference),
        Type::Paren(inner) => find_reference(&inner.elem),
        Type::Group(inner) => find_reference(&inner.elem),
        Type::Array(inner) => find_reference(&inner.elem),
        Type::Slice(inner) => find_reference(&inner.elem),
        Type::Tuple(tuple) => tuple.elems.iter().find_map(find_reference),
        Type::Path(path) => path.path.segments.iter().find_map(|segment| match &segment.arguments {
            syn::PathArguments::AngleBracketed(arguments) => {
                arguments.args.iter().find_map(|argument| match argument {
                    syn::GenericArgument::Type(ty) => find_reference(ty),
                    _ => None,
                })
            }
            _ => None,
        }),
        _ => None,
    }
}
