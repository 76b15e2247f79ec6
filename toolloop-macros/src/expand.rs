//! Code generation for `#[derive(Tool)]`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Path};

use crate::ast::ToolStruct;
use crate::attr::{self, DocLine};
use crate::check;
use crate::container::Bridge;
use crate::ctxt::Ctxt;

pub(crate) fn derive_tool(input: &DeriveInput) -> TokenStream {
    let mut cx = Ctxt::default();
    let (attrs, model) = ToolStruct::from_input(&mut cx, input);
    let krate: Path = attrs.krate.clone().unwrap_or_else(|| syn::parse_quote!(::toolloop));
    let name = check::tool_name(&mut cx, &input.ident, attrs.name.as_ref());
    let description = match &attrs.description {
        Some(literal) if !literal.value().trim().is_empty() => Some(quote!(#literal)),
        Some(literal) => {
            check::missing_description(&mut cx, literal.span());
            None
        }
        None => {
            let docs = attr::docs(&input.attrs);
            if attr::has_text(&docs) {
                Some(concat_docs(&docs))
            } else {
                check::missing_description(&mut cx, input.ident.span());
                None
            }
        }
    };
    let state = attrs.state.as_ref().map_or_else(|| quote!(()), |ty| quote!(#ty));

    match (cx.into_result(), model, description) {
        (Ok(()), Some(model), Some(description)) => {
            let timeout = attrs.timeout.map(|(_, millis)| millis);
            expand(&model, &krate, &name, &description, &state, timeout)
        }
        (result, _, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            // A generic struct cannot get a plain stand-in without new errors of its own.
            let stub = input.generics.params.is_empty().then(|| stand_in(&input.ident, &krate, &state));
            quote!(#errors #stub)
        }
    }
}

/// An impl that type-checks but never runs, emitted beside the errors so
/// that uses of the tool elsewhere do not add a cascade of "trait not
/// implemented" errors.
fn stand_in(ident: &syn::Ident, krate: &Path, state: &TokenStream) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl #krate::Tool for #ident {
            const NAME: &'static str = "";
            type State = #state;
            fn definition() -> &'static #krate::ToolDefinition {
                ::core::unreachable!()
            }
            fn parse(
                _: &#krate::__private::serde_json::Value,
            ) -> ::core::result::Result<Self, #krate::ArgumentError> {
                ::core::unreachable!()
            }
            fn call(
                self,
                _: &Self::State,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#krate::ToolOutput, #krate::ToolError>,
            > + ::core::marker::Send {
                async { ::core::unreachable!() }
            }
        }
    }
}

/// The description as a `concat!` of the doc lines, so that
/// `#[doc = include_str!(...)]` works too.
fn concat_docs(docs: &[DocLine]) -> TokenStream {
    let mut parts = Vec::new();
    for (i, line) in docs.iter().enumerate() {
        if i > 0 {
            parts.push(quote!("\n"));
        }
        parts.push(match line {
            DocLine::Literal(text) => quote!(#text),
            DocLine::Expr(expr) => quote!(#expr),
        });
    }
    quote!(::core::concat!(#(#parts),*))
}

fn expand(
    model: &ToolStruct<'_>,
    krate: &Path,
    name: &str,
    description: &TokenStream,
    state: &TokenStream,
    timeout_millis: Option<u64>,
) -> TokenStream {
    let ident = model.ident;
    let krate_text = quote!(#krate).to_string().replace(' ', "");
    let serde_path = format!("{krate_text}::__private::serde");
    let schemars_path = format!("{krate_text}::__private::schemars");
    let schemars_attrs = &model.schemars;
    let serde_attrs = &model.serde.serde;
    // A field whose type needs `Deserialize` is read through a newtype whose
    // `Deserialize` has no bounds, so that a type without it is reported
    // once, at the field, instead of at each use in serde's derived code.
    // schemars describes the field by its own type.
    let newtypes: Vec<Option<syn::Ident>> = model
        .fields
        .iter()
        .enumerate()
        .map(|(i, field)| field.needs_traits.then(|| format_ident!("__ToolArgument{}", i)))
        .collect();
    let field_defs = model.fields.iter().zip(&newtypes).map(|(field, newtype)| {
        let (attrs, ident, ty) = (&field.passthrough, field.ident, field.ty);
        match newtype {
            Some(newtype) => {
                let described_by = syn::LitStr::new(&quote!(#ty).to_string(), ty.span());
                quote!(#(#attrs)* #[schemars(with = #described_by)] #ident: #newtype)
            }
            None => quote!(#(#attrs)* #ident: #ty),
        }
    });
    let newtype_defs = model.fields.iter().zip(&newtypes).filter_map(|(field, newtype)| {
        let newtype = newtype.as_ref()?;
        let ty = field.ty;
        let read = quote_spanned!(ty.span()=> #krate::__private::deserialize_argument::<#ty, D>(deserializer));
        Some(quote! {
            struct #newtype(#ty);
            impl<'de> #krate::__private::serde::Deserialize<'de> for #newtype {
                fn deserialize<D: #krate::__private::serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> ::core::result::Result<Self, D::Error> {
                    #read.map(#newtype)
                }
            }
        })
    });
    let from_arguments = model.fields.iter().zip(&newtypes).map(|(field, newtype)| {
        let ident = field.ident;
        match newtype {
            Some(_) => quote!(#ident: arguments.#ident.0),
            None => quote!(#ident: arguments.#ident),
        }
    });
    let to_arguments: Vec<TokenStream> = model
        .fields
        .iter()
        .zip(&newtypes)
        .map(|(field, newtype)| {
            let ident = field.ident;
            match newtype {
                Some(newtype) => quote!(#ident: #newtype(tool.#ident)),
                None => quote!(#ident: tool.#ident),
            }
        })
        .collect();
    let bridges = model.serde.bridges.iter().map(|bridge| bridge_impl(bridge, ident, &to_arguments));
    let timeout = timeout_millis
        .map_or_else(|| quote!(::core::option::Option::None), |millis| quote!(::core::option::Option::Some(#millis)));
    // Spanned at the struct's name, so that a missing or mistyped `run` is
    // reported there, once, with the signature to write.
    let run = if model.takes_state {
        quote_spanned! {ident.span()=>
            let (run, signature) = #krate::__private::RunProbe(#ident::run, self, state).call_run();
            #krate::__private::require_run_with_state::<Self, Self::State, _>(signature);
        }
    } else {
        quote_spanned! {ident.span()=>
            let (run, signature) = #krate::__private::RunProbe(#ident::run, self, ()).call_run();
            #krate::__private::require_run::<Self, _>(signature);
        }
    };
    let result = quote_spanned!(ident.span()=> #krate::__private::IntoToolResult::into_tool_result(run.await));

    quote! {
        const _: () = {
            #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
            #[serde(crate = #serde_path)]
            #[schemars(crate = #schemars_path)]
            #(#serde_attrs)*
            #(#schemars_attrs)*
            struct __ToolArguments {
                #(#field_defs,)*
            }

            #(#newtype_defs)*

            #(#bridges)*

            // What `#ident::run` resolves to when there is no inherent
            // `run`: inherent functions come first, so this is only ever
            // used to report the missing method.
            #[allow(dead_code)]
            trait __ToolRunFallback {
                fn run(_: #krate::__private::NoRunMethod) {}
            }
            impl __ToolRunFallback for #ident {}

            #[automatically_derived]
            impl #krate::Tool for #ident {
                const NAME: &'static str = #name;
                type State = #state;

                fn definition() -> &'static #krate::ToolDefinition {
                    static DEFINITION: ::std::sync::OnceLock<#krate::ToolDefinition> = ::std::sync::OnceLock::new();
                    DEFINITION.get_or_init(|| {
                        #krate::__private::definition::<__ToolArguments>(#name, #description, #timeout)
                    })
                }

                fn parse(
                    input: &#krate::__private::serde_json::Value,
                ) -> ::core::result::Result<Self, #krate::ArgumentError> {
                    let arguments: __ToolArguments = #krate::__private::parse_arguments(
                        input,
                        <Self as #krate::Tool>::definition(),
                    )?;
                    ::core::result::Result::Ok(Self { #(#from_arguments,)* })
                }

                #[allow(unused_variables)]
                fn call(
                    self,
                    state: &Self::State,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<#krate::ToolOutput, #krate::ToolError>,
                > + ::core::marker::Send {
                    use #krate::__private::{CallRun as _, CallRunFallback as _};
                    #run
                    async move { #result }
                }
            }
        };
    }
}

/// Builds the hidden argument type from the user's struct where a
/// container attribute names the struct (`default`, `from`, `try_from`).
fn bridge_impl(bridge: &Bridge, ident: &syn::Ident, fields: &[TokenStream]) -> TokenStream {
    let copy = quote!(__ToolArguments { #(#fields,)* });
    match bridge {
        Bridge::Default(span) => {
            // Re-spanned so that a missing `Default` is reported at the attribute.
            let ident = syn::Ident::new(&ident.to_string(), *span);
            quote_spanned! {*span=>
            impl ::core::default::Default for __ToolArguments {
                fn default() -> Self {
                    let tool = <#ident as ::core::default::Default>::default();
                    #copy
                }
            }
            }
        }
        Bridge::DefaultWith(path) => quote_spanned! {path.span()=>
            impl ::core::default::Default for __ToolArguments {
                fn default() -> Self {
                    let tool: #ident = #path();
                    #copy
                }
            }
        },
        Bridge::From(ty) => quote_spanned! {ty.span()=>
            impl ::core::convert::From<#ty> for __ToolArguments {
                fn from(value: #ty) -> Self {
                    let tool = <#ident as ::core::convert::From<#ty>>::from(value);
                    #copy
                }
            }
        },
        Bridge::TryFrom(ty) => quote_spanned! {ty.span()=>
            impl ::core::convert::TryFrom<#ty> for __ToolArguments {
                type Error = <#ident as ::core::convert::TryFrom<#ty>>::Error;
                fn try_from(value: #ty) -> ::core::result::Result<Self, Self::Error> {
                    let tool = <#ident as ::core::convert::TryFrom<#ty>>::try_from(value)?;
                    ::core::result::Result::Ok(#copy)
                }
            }
        },
    }
}
