//! The user's callbacks on a typed output: the reflection handler and
//! validators. The builder takes closures (so that their argument types are
//! inferred); what the closures return is bounded by traits of its own
//! ([`ReflectionText`], [`ValidationResult`], [`ValidationFuture`]), so that a wrong
//! return type gets a message that says what to return.

/// No reflection handler: the output tool call ends the iteration loop.
// Hidden from the docs only (`cfg(doc)`): the default of `Agent<O, R>`'s `R`,
// which users never write (`Agent<Offer>` has no reflection), but rustc names it.
#[cfg_attr(doc, doc(hidden))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoReflection;

/// A reflection handler is set: the output tool returns its rendering and
/// the injected `submit` tool ends the iteration loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reflective;

/// A reflection handler for output type `O`: renders a proposed output for
/// the model to review.
pub trait ReflectionHandler<O>: Send + Sync + 'static {
    /// Renders `output`.
    fn render(&self, output: &O) -> String;
}

#[diagnostic::do_not_recommend]
impl<O, F, S> ReflectionHandler<O> for F
where
    F: Fn(&O) -> S + Send + Sync + 'static,
    S: Into<String>,
{
    fn render(&self, output: &O) -> String {
        self(output).into()
    }
}

/// What a reflection handler returns: the text the model reviews, a
/// `String`.
///
/// Only `String`: a `&str` borrowed from the output cannot outlive the
/// call (rustc would say only "lifetime may not live long enough"), so
/// every `&str` is turned away here with a message that says what to
/// return instead, a literal included (`"looks good".to_owned()`).
#[diagnostic::on_unimplemented(
    message = "the reflection handler must return a `String`, not `{Self}`",
    label = "this handler returns `{Self}`",
    note = "the handler renders the proposed output as text for the model to review, and the text must own its \
            contents: return `format!(\"{{output:?}}\")`, `output.title.clone()` or `\"...\".to_owned()`"
)]
pub trait ReflectionText: Into<String> {}

#[diagnostic::do_not_recommend]
impl ReflectionText for String {}

/// A validator for output type `O`: `Fn(&O) -> Result<(), E>` with `E: Display`
/// (see [`ValidationResult`]).
pub trait Validator<O>: Send + Sync + 'static {
    /// Checks `output`.
    fn check(&self, output: &O) -> Result<(), String>;
}

#[diagnostic::do_not_recommend]
impl<O, F, V> Validator<O> for F
where
    F: Fn(&O) -> V + Send + Sync + 'static,
    V: ValidationResult,
{
    fn check(&self, output: &O) -> Result<(), String> {
        self(output).into_result()
    }
}

/// What a validator returns: `Ok(())` when the output is valid, `Err(reason)`
/// otherwise (the reason, any `Display`, is fed back to the model).
///
/// The builder's validator methods take closures returning a `ValidationResult`
/// rather than `Result<(), E>` itself, so that a closure returning something
/// else (a `bool`) is told what to return instead of being offered
/// `Err(..)` around its value by rustc.
#[diagnostic::on_unimplemented(
    message = "a validator must return `Result<(), E>`, not `{Self}`",
    label = "this validator returns `{Self}`",
    note = "return `Ok(())` when the output is valid and `Err(reason)` when it is not: the reason (a `String`, `&str` or any `Display`) is fed back to the model",
    note = "for example: `if output.score > 0 {{ Ok(()) }} else {{ Err(\"the score must be positive\") }}`"
)]
pub trait ValidationResult {
    /// The result, with the reason rendered as text.
    #[doc(hidden)]
    fn into_result(self) -> Result<(), String>;
}

impl<E: ValidationError> ValidationResult for Result<(), E> {
    fn into_result(self) -> Result<(), String> {
        self.map_err(|reason| reason.to_string())
    }
}

/// Why a validator rejected an output: shown to the model, so `Display`.
#[diagnostic::on_unimplemented(
    message = "a validator's error must implement `Display`: `{Self}` does not",
    label = "the model is shown this error, so it must be `Display`",
    note = "return `Err(format!(..))` or `Err(\"reason\")`, or implement `std::fmt::Display` for `{Self}`"
)]
pub trait ValidationError: std::fmt::Display {}

#[diagnostic::do_not_recommend]
impl<E: std::fmt::Display> ValidationError for E {}

/// An async validator for output type `O`: `Fn(&O) -> impl Future<Output = Result<(), E>>`.
/// The future must own what it needs (clone fields out of the output).
pub trait AsyncValidator<O>: Send + Sync + 'static {
    /// Checks `output`.
    fn check(&self, output: &O) -> crate::model::BoxFuture<'static, Result<(), String>>;
}

#[diagnostic::do_not_recommend]
impl<O, F, Fut> AsyncValidator<O> for F
where
    F: Fn(&O) -> Fut + Send + Sync + 'static,
    Fut: ValidationFuture,
{
    fn check(&self, output: &O) -> crate::model::BoxFuture<'static, Result<(), String>> {
        let future = self(output);
        Box::pin(async move { future.await.into_result() })
    }
}

/// What an async validator returns: a future of a [`ValidationResult`] that owns
/// what it needs (`Send + 'static`), such as an `async move` block.
///
/// A future that borrows the output (`async move { output.score > 0 }` on
/// the `&Report` itself) is rejected by rustc with "lifetime may not live
/// long enough", which no message of ours can replace: clone the fields the
/// check needs before the `async move` block.
#[diagnostic::on_unimplemented(
    message = "an async validator must return a `Send` future of `Result<(), E>`, such as `async move {{ .. }}`, not `{Self}`",
    label = "this validator returns `{Self}`",
    note = "for a check that does not wait on anything, use `.validator(..)`; otherwise clone what the check needs out of the output and return `async move {{ .. }}`",
    note = "the future must be `Send`: do not hold an `Rc` or a `RefCell` borrow across an `.await`"
)]
pub trait ValidationFuture: Future<Output = Self::Outcome> + Send + 'static {
    /// What the future resolves to.
    type Outcome: ValidationResult;
}

#[diagnostic::do_not_recommend]
impl<Fut> ValidationFuture for Fut
where
    Fut: Future + Send + 'static,
    Fut::Output: ValidationResult,
{
    type Outcome = Fut::Output;
}
