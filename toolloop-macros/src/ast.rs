//! A small model of the struct being derived, keeping spans for errors.

use syn::{Attribute, Data, DeriveInput, Fields, Ident, Type};

use crate::attr::ToolAttrs;
use crate::ctxt::Ctxt;

pub(crate) struct ToolStruct<'a> {
    pub(crate) ident: &'a Ident,
    /// Whether `#[tool(state = ...)]` was given, so `run` takes the state.
    pub(crate) takes_state: bool,
    /// `#[serde(...)]` and `#[schemars(...)]` on the struct, passed on untouched.
    pub(crate) passthrough: Vec<&'a Attribute>,
    pub(crate) fields: Vec<Field<'a>>,
}

pub(crate) struct Field<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) ty: &'a Type,
    /// Doc comments, `#[serde(...)]` and `#[schemars(...)]`, passed on untouched.
    pub(crate) passthrough: Vec<&'a Attribute>,
}

/// Whether schemars and serde should see `attr` too.
fn is_passthrough(attr: &Attribute) -> bool {
    ["doc", "serde", "schemars"].iter().any(|name| attr.path().is_ident(name))
}

impl<'a> ToolStruct<'a> {
    /// Reads `input`; `None` when its shape cannot be a tool (the reason is in `cx`).
    pub(crate) fn from_input(cx: &mut Ctxt, input: &'a DeriveInput) -> (ToolAttrs, Option<Self>) {
        let attrs = ToolAttrs::parse(cx, &input.attrs);
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
            if let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("tool")) {
                cx.error_spanned_by(
                    attr,
                    "#[tool(...)] goes on the struct; describe a field with a doc comment, \
                     or rename it with #[serde(rename = \"...\")]",
                );
            }
        }
        let Some(fields) = fields else { return (attrs, None) };
        let model = Self {
            ident: &input.ident,
            takes_state: attrs.state.is_some(),
            passthrough: input.attrs.iter().filter(|a| is_passthrough(a) && !a.path().is_ident("doc")).collect(),
            fields: fields
                .iter()
                .map(|field| Field {
                    ident: field.ident.as_ref().expect("named field"),
                    ty: &field.ty,
                    passthrough: field.attrs.iter().filter(|a| is_passthrough(a)).collect(),
                })
                .collect(),
        };
        (attrs, Some(model))
    }
}
