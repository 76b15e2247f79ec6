//! Code generation for `#[derive(Tool)]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{DeriveInput, Path};

use crate::arguments;
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
        None if attrs.description_given => None,
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
    let arguments = arguments::generate(model, krate);
    let from_arguments = &arguments.into_tool;
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
            #arguments

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
