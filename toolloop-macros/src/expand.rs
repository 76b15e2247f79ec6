//! Code generation for `#[derive(Tool)]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
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
    let wrong_crate = attrs.krate.as_ref().is_some_and(|path| check::crate_path(&mut cx, path));
    let name = check::tool_name(&mut cx, &input.ident, attrs.name.as_ref());
    let docs = attr::docs(&input.attrs);
    let has_doc = attr::has_text(&docs);
    let description = match &attrs.description {
        Some(literal) if has_doc => {
            check::description_twice(&mut cx, literal);
            None
        }
        Some(literal) if !literal.value().trim().is_empty() => Some(quote!(#literal)),
        Some(literal) => {
            check::missing_description(&mut cx, literal.span());
            None
        }
        None if has_doc => Some(concat_docs(&docs)),
        None if attrs.description_given => None,
        None => {
            check::missing_description(&mut cx, input.ident.span());
            None
        }
    };
    if let Some(full_doc) = attrs.full_doc.as_ref().filter(|_| !has_doc) {
        cx.error_spanned_by(
            full_doc,
            "`full_doc` sends the whole doc comment, and this tool has none: remove `full_doc`",
        );
    }
    let state = attrs.state.as_ref().map_or_else(|| quote!(()), |ty| quote!(#ty));

    match (cx.into_result(), model, description) {
        (Ok(()), Some(model), Some(description)) => {
            let settings = Settings {
                name: &name,
                description: &description,
                from_doc: attrs.description.is_none(),
                full_doc: attrs.full_doc.is_some(),
                timeout_millis: attrs.timeout.map(|(_, millis)| millis),
            };
            expand(&model, &krate, &settings, &state)
        }
        (result, _, _) => {
            let errors = result.err().map(|error| error.to_compile_error());
            // A generic struct cannot get a plain stand-in without new errors
            // of its own, and a wrong `crate` path would fail in it too.
            let stub =
                (input.generics.params.is_empty() && !wrong_crate).then(|| stand_in(&input.ident, &krate, &state));
            quote!(#errors #stub)
        }
    }
}

/// What the definition is made of.
struct Settings<'a> {
    name: &'a str,
    description: &'a TokenStream,
    /// The description is the doc comment (so its summary is sent).
    from_doc: bool,
    /// `#[tool(full_doc)]`.
    full_doc: bool,
    timeout_millis: Option<u64>,
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
            fn definition() -> &'static #krate::tool::ToolDefinition {
                ::core::unreachable!()
            }
            fn parse(
                _: &#krate::__private::serde_json::Value,
            ) -> ::core::result::Result<Self, #krate::ToolError> {
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

fn expand(model: &ToolStruct<'_>, krate: &Path, settings: &Settings<'_>, state: &TokenStream) -> TokenStream {
    let ident = model.ident;
    // Every path below goes through this one import, so that a `crate = ...`
    // that does not name toolloop is one error, at the attribute.
    let alias: Path = syn::parse_quote!(__toolloop);
    let import = quote_spanned!(krate.span()=> use #krate::__private::toolloop as __toolloop;);
    let krate = &alias;
    let arguments = arguments::generate(model, krate);
    let from_arguments = &arguments.into_tool;
    let Settings { name, description, from_doc, full_doc, timeout_millis } = settings;
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
    // A tool is `Send`: each field's type must be. As bounds of the impl,
    // at the field, a field that is not is one error there (rustc names the
    // type inside it that is not `Send`), not one per use of `Self: Send`.
    let send_bounds = model.fields.iter().map(|field| {
        let ty = field.ty;
        let krate = syn::Ident::new("__toolloop", ty.span());
        quote_spanned!(ty.span()=> #ty: #krate::__private::SendArgument)
    });

    quote! {
        const _: () = {
            #import

            __toolloop::__private::emit! {
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
            impl #krate::Tool for #ident where #(#send_bounds,)* {
                const NAME: &'static str = #name;
                type State = #state;

                fn definition() -> &'static #krate::tool::ToolDefinition {
                    static DEFINITION: ::std::sync::OnceLock<#krate::tool::ToolDefinition> = ::std::sync::OnceLock::new();
                    DEFINITION.get_or_init(|| {
                        #krate::__private::definition::<__ToolArguments>(#name, #description, #from_doc, #full_doc, #timeout)
                    })
                }

                fn parse(
                    input: &#krate::__private::serde_json::Value,
                ) -> ::core::result::Result<Self, #krate::ToolError> {
                    // Whether the schema has constraints to walk: the type's, worked out once.
                    static CONSTRAINED: ::std::sync::OnceLock<bool> = ::std::sync::OnceLock::new();
                    let definition = <Self as #krate::Tool>::definition();
                    let constrained = *CONSTRAINED.get_or_init(|| #krate::__private::has_constraints(definition));
                    let arguments: __ToolArguments =
                        #krate::__private::parse_arguments_checked(input, definition, constrained)?;
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
            }
        };
    }
}
