//! `#[derive(Arbitrary)]`: a default generator (`seedledger_runner::any::<T>()`) for a
//! struct or an enum, re-exported by `seedledger-runner` (use it from there: the expansion
//! names `::seedledger_runner`).
//!
//! * A struct (named, tuple or unit) draws its fields in declaration order.
//! * An enum draws its variant's index first (the first variant is the simplest, so
//!   shrinking moves toward it), then that variant's fields. An enum without variants is
//!   refused.
//! * Each field is drawn as `labelled("field_name", generator)` (a tuple field's name is its
//!   index), a span named after the field around the generator's own span.
//! * A field's generator is `any::<FieldType>()` unless the field says otherwise:
//!   `#[seedledger(gen = "int(0..=9u8)")]` (any expression that evaluates to a generator of
//!   the field's type, in the scope where the type is defined) or
//!   `#[seedledger(with = path::to::function)]` (a function taking no argument and returning
//!   such a generator).
//! * Type parameters get an `Arbitrary` bound; the type must implement `Debug`.
//!
//! A recursive type (a `Box<Self>` field) draws without a depth bound: give it a generator
//! built with `recursive_tree` instead, or a `with` generator on the recursive field.
#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::ext::IdentExt;
use syn::{
    Attribute, Data, DeriveInput, Error, Expr, ExprPath, Fields, LitStr, Result, parse_macro_input,
    parse_quote,
};

/// Implements `seedledger_runner::Arbitrary` for a struct or an enum; see the crate docs.
#[proc_macro_derive(Arbitrary, attributes(seedledger))]
pub fn derive_arbitrary(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// The implementation, or the error to report at the offending tokens.
fn expand(input: &DeriveInput) -> Result<TokenStream2> {
    let runner = quote!(::seedledger_runner);
    no_attribute_here(&input.attrs, "the type")?;
    let name = &input.ident;
    let body = match &input.data {
        Data::Struct(data) => construct(&quote!(#name), &data.fields)?,
        Data::Enum(data) => {
            if data.variants.is_empty() {
                return Err(Error::new_spanned(
                    name,
                    "cannot derive `Arbitrary` for an enum without variants: it has no value to draw",
                ));
            }
            let last = data.variants.len() - 1;
            let mut arms = Vec::with_capacity(data.variants.len());
            for (i, variant) in data.variants.iter().enumerate() {
                no_attribute_here(&variant.attrs, "a variant")?;
                let vname = &variant.ident;
                let value = construct(&quote!(#name::#vname), &variant.fields)?;
                let index = i as u64;
                arms.push(if i == last {
                    quote!(_ => #value,)
                } else {
                    quote!(#index => #value,)
                });
            }
            let max = last as u64;
            quote! {
                match tc.uniform_choice(#max) {
                    #(#arms)*
                }
            }
        }
        Data::Union(data) => {
            return Err(Error::new_spanned(
                data.union_token,
                "cannot derive `Arbitrary` for a union",
            ));
        }
    };
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param.bounds.push(parse_quote!(#runner::Arbitrary));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let label = name.unraw().to_string();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #runner::Arbitrary for #name #ty_generics #where_clause {
            fn arbitrary(tc: &mut #runner::TestCase) -> Self {
                #body
            }
            fn label() -> &'static str {
                #label
            }
        }
    })
}

/// The expression building `path` (a struct or a variant) from its drawn fields.
fn construct(path: &TokenStream2, fields: &Fields) -> Result<TokenStream2> {
    Ok(match fields {
        Fields::Named(named) => {
            let mut inits = Vec::with_capacity(named.named.len());
            for field in &named.named {
                let Some(ident) = &field.ident else {
                    return Err(Error::new_spanned(field, "a named field without a name"));
                };
                let draw = draw_field(&ident.unraw().to_string(), field)?;
                inits.push(quote!(#ident: #draw));
            }
            quote!(#path { #(#inits,)* })
        }
        Fields::Unnamed(unnamed) => {
            let mut draws = Vec::with_capacity(unnamed.unnamed.len());
            for (i, field) in unnamed.unnamed.iter().enumerate() {
                draws.push(draw_field(&i.to_string(), field)?);
            }
            quote!(#path( #(#draws,)* ))
        }
        Fields::Unit => quote!(#path),
    })
}

/// The draw of one field, in a span named `label`.
fn draw_field(label: &str, field: &syn::Field) -> Result<TokenStream2> {
    let runner = quote!(::seedledger_runner);
    let ty = &field.ty;
    let generator = match field_generator(&field.attrs)? {
        Some(generator) => generator,
        None => quote!(#runner::any::<#ty>()),
    };
    Ok(quote!(tc.draw(&#runner::labelled(#label, #generator))))
}

/// The generator a field's `#[seedledger(...)]` attribute names, if any.
fn field_generator(attrs: &[Attribute]) -> Result<Option<TokenStream2>> {
    let mut found: Option<TokenStream2> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("seedledger")) {
        attr.parse_nested_meta(|meta| {
            let generator = if meta.path.is_ident("gen") {
                let text: LitStr = meta.value()?.parse()?;
                let expr: Expr = text.parse()?;
                quote!(#expr)
            } else if meta.path.is_ident("with") {
                let path: ExprPath = meta.value()?.parse()?;
                quote!(#path())
            } else {
                return Err(meta.error(
                    "unknown seedledger attribute: expected `gen = \"expression\"` or `with = path`",
                ));
            };
            if found.is_some() {
                return Err(meta.error("a field takes one generator: `gen` or `with`, once"));
            }
            found = Some(generator);
            Ok(())
        })?;
    }
    Ok(found)
}

/// `#[seedledger(...)]` belongs on fields only.
fn no_attribute_here(attrs: &[Attribute], what: &str) -> Result<()> {
    match attrs.iter().find(|a| a.path().is_ident("seedledger")) {
        Some(attr) => Err(Error::new_spanned(
            attr,
            format!("`#[seedledger(...)]` goes on fields, not on {what}"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn error_of(input: DeriveInput) -> String {
        match expand(&input) {
            Ok(tokens) => panic!("expanded: {tokens}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn what_cannot_be_derived_is_refused_with_a_reason() {
        let table: Vec<(DeriveInput, &str)> = vec![
            (
                parse_quote!(
                    enum Never {}
                ),
                "cannot derive `Arbitrary` for an enum without variants: it has no value to draw",
            ),
            (
                parse_quote!(
                    union U {
                        a: u8,
                    }
                ),
                "cannot derive `Arbitrary` for a union",
            ),
            (
                parse_quote!(
                    struct S {
                        #[seedledger(size = 3)]
                        a: u8,
                    }
                ),
                "unknown seedledger attribute: expected `gen = \"expression\"` or `with = path`",
            ),
            (
                parse_quote!(
                    struct S {
                        #[seedledger(gen = "int(0..=3)", with = small)]
                        a: u8,
                    }
                ),
                "a field takes one generator: `gen` or `with`, once",
            ),
            (
                parse_quote!(
                    struct S(#[seedledger(gen = "1 +")] u8);
                ),
                "unexpected end of input, expected an expression",
            ),
            (
                parse_quote!(
                    #[seedledger(gen = "x")]
                    struct S(u8);
                ),
                "`#[seedledger(...)]` goes on fields, not on the type",
            ),
            (
                parse_quote!(
                    enum E {
                        #[seedledger(with = f)]
                        A(u8),
                    }
                ),
                "`#[seedledger(...)]` goes on fields, not on a variant",
            ),
        ];
        for (input, want) in table {
            assert_eq!(error_of(input), want);
        }
    }

    #[test]
    fn fields_are_drawn_in_order_through_labelled_spans() {
        let input: DeriveInput = parse_quote!(
            struct Point<T> {
                r#type: T,
                #[seedledger(gen = "int(0..=9u8)")]
                y: u8,
                #[seedledger(with = small::gen)]
                z: u8,
            }
        );
        let text = expand(&input).map(|t| t.to_string()).unwrap_or_default();
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("`{needle}` not in {text}"))
        };
        assert!(at("\"type\"") < at("\"y\"") && at("\"y\"") < at("\"z\""));
        assert!(
            text.contains(":: seedledger_runner :: any :: < T > ()"),
            "{text}"
        );
        assert!(text.contains("int (0 ..= 9u8)") && text.contains("small :: gen ()"));
        assert!(
            text.contains("T : :: seedledger_runner :: Arbitrary"),
            "{text}"
        );
        assert!(
            text.contains("fn label () -> & 'static str { \"Point\" }"),
            "{text}"
        );
    }
}
