//! The hidden argument type a derived tool parses the model's JSON into:
//! the struct's fields with their `#[serde]`/`#[schemars]` attributes, the
//! derives that read and describe them, and the conversions between it and
//! the tool struct.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Path};

use crate::ast::{Field, ToolStruct};
use crate::container::Bridge;

/// The generated argument type, and how the tool struct is built from it.
pub(crate) struct Arguments {
    definition: TokenStream,
    /// `field: arguments.field` for each field.
    pub(crate) into_tool: Vec<TokenStream>,
}

impl ToTokens for Arguments {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.definition.to_tokens(tokens);
    }
}

/// A field whose type needs `Deserialize` and `JsonSchema` is read and
/// described through a newtype whose impls have no bounds, so that a type
/// without them is reported once, at the field ("needs both"), instead of
/// at each place serde's and schemars' derived code uses it. The newtype's
/// schema is the field type's own (see `__private::Describe`).
fn newtype(index: usize, field: &Field<'_>) -> Option<Ident> {
    field.needs_traits.then(|| format_ident!("__ToolArgument{}", index))
}

pub(crate) fn generate(model: &ToolStruct<'_>, krate: &Path) -> Arguments {
    let krate_text = quote!(#krate).to_string().replace(' ', "");
    let serde_path = format!("{krate_text}::__private::serde");
    let schemars_path = format!("{krate_text}::__private::schemars");
    let (schemars_attrs, serde_attrs) = (&model.schemars, &model.serde.serde);
    let newtypes: Vec<Option<Ident>> = model.fields.iter().enumerate().map(|(i, field)| newtype(i, field)).collect();

    let mut field_defs = Vec::new();
    let mut newtype_defs = Vec::new();
    let mut into_tool = Vec::new();
    let mut from_tool = Vec::new();
    for (field, newtype) in model.fields.iter().zip(&newtypes) {
        let (attrs, ident, ty) = (&field.passthrough, field.ident, field.ty);
        if let Some(newtype) = newtype {
            field_defs.push(quote!(#(#attrs)* #ident: #newtype));
            let read = quote_spanned!(ty.span()=>
                #krate::__private::deserialize_argument::<#ty, __ToolDeserializer>(deserializer)
            );
            newtype_defs.push(quote! {
                struct #newtype(#ty);
                impl<'__tool_de> #krate::__private::serde::Deserialize<'__tool_de> for #newtype {
                    fn deserialize<__ToolDeserializer: #krate::__private::serde::Deserializer<'__tool_de>>(
                        deserializer: __ToolDeserializer,
                    ) -> ::core::result::Result<Self, __ToolDeserializer::Error> {
                        #read.map(#newtype)
                    }
                }
                #[automatically_derived]
                impl #krate::__private::schemars::JsonSchema for #newtype {
                    fn inline_schema() -> bool {
                        (#newtype::description().inline_schema)()
                    }
                    fn schema_name() -> ::std::borrow::Cow<'static, str> {
                        (#newtype::description().schema_name)()
                    }
                    fn schema_id() -> ::std::borrow::Cow<'static, str> {
                        (#newtype::description().schema_id)()
                    }
                    fn json_schema(
                        generator: &mut #krate::__private::schemars::SchemaGenerator,
                    ) -> #krate::__private::schemars::Schema {
                        (#newtype::description().json_schema)(generator)
                    }
                    fn _schemars_private_non_optional_json_schema(
                        generator: &mut #krate::__private::schemars::SchemaGenerator,
                    ) -> #krate::__private::schemars::Schema {
                        (#newtype::description().non_optional_json_schema)(generator)
                    }
                    fn _schemars_private_is_option() -> bool {
                        (#newtype::description().is_option)()
                    }
                }
                impl #newtype {
                    fn description() -> #krate::__private::ArgumentDescription {
                        use #krate::__private::{DescribeArgument as _, DescribeArgumentFallback as _};
                        (&#krate::__private::Describe::<#ty>::NEW).description()
                    }
                }
            });
            into_tool.push(quote!(#ident: arguments.#ident.0));
            from_tool.push(quote!(#ident: #newtype(tool.#ident)));
        } else {
            field_defs.push(quote!(#(#attrs)* #ident: #ty));
            into_tool.push(quote!(#ident: arguments.#ident));
            from_tool.push(quote!(#ident: tool.#ident));
        }
    }
    let bridges = model.serde.bridges.iter().map(|bridge| bridge_impl(bridge, model.ident, &from_tool));

    let definition = quote! {
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
    };
    Arguments { definition, into_tool }
}

/// Builds the hidden argument type from the user's struct where a
/// container attribute names the struct (`default`, `from`, `try_from`).
fn bridge_impl(bridge: &Bridge, ident: &Ident, fields: &[TokenStream]) -> TokenStream {
    let copy = quote!(__ToolArguments { #(#fields,)* });
    match bridge {
        Bridge::Default(span) => {
            // Re-spanned so that a missing `Default` is reported at the attribute.
            let ident = Ident::new(&ident.to_string(), *span);
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
