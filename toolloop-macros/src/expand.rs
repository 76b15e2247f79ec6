//! Code generation for `#[derive(Tool)]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{DeriveInput, Path};

use crate::ast::ToolStruct;
use crate::attr::{self, DocLine};
use crate::check;
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
    let container_attrs = &model.passthrough;
    let field_idents: Vec<_> = model.fields.iter().map(|f| f.ident).collect();
    let field_defs = model.fields.iter().map(|field| {
        let (attrs, ident, ty) = (&field.passthrough, field.ident, field.ty);
        quote!(#(#attrs)* #ident: #ty)
    });
    let timeout = timeout_millis
        .map_or_else(|| quote!(::core::option::Option::None), |millis| quote!(::core::option::Option::Some(#millis)));
    // Spanned at the struct so that a missing or mistyped `run` is reported there.
    let run = if model.takes_state {
        quote_spanned!(ident.span()=> #ident::run(self, state))
    } else {
        quote_spanned!(ident.span()=> #ident::run(self))
    };
    let body = quote_spanned!(ident.span()=>
        async move { #krate::__private::IntoToolResult::into_tool_result(#run.await) }
    );

    quote! {
        const _: () = {
            #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
            #[serde(crate = #serde_path)]
            #[schemars(crate = #schemars_path)]
            #(#container_attrs)*
            struct __ToolArguments {
                #(#field_defs,)*
            }

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
                    ::core::result::Result::Ok(Self { #(#field_idents: arguments.#field_idents,)* })
                }

                #[allow(unused_variables)]
                fn call(
                    self,
                    state: &Self::State,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<#krate::ToolOutput, #krate::ToolError>,
                > + ::core::marker::Send {
                    #body
                }
            }
        };
    }
}
