//! The user's callbacks on a typed output: the reflection handler and
//! validators. The builder takes closures; these traits name what they must
//! be, so a wrong closure gets a message that says so.

/// No reflection handler: the output tool call ends the iteration loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoReflection;

/// A reflection handler is set: the output tool returns its rendering and
/// the injected `submit` tool ends the iteration loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reflective;

/// A reflection handler for output type `O`: renders a proposed output for
/// the model to review.
#[diagnostic::on_unimplemented(
    message = "a reflection handler must be a `Fn(&{O}) -> String` that is `Send + Sync + 'static`",
    label = "not a reflection handler for `{O}`",
    note = "the handler renders the proposed output for the model: `.reflection(|output: &{O}| format!(\"{{output:?}}\"))`"
)]
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

/// What a reflection handler returns: the text the model reviews (a
/// `String`, or anything that converts into one, such as `&'static str`).
#[diagnostic::on_unimplemented(
    message = "the reflection handler must return a `String`, not `{Self}`",
    label = "this handler returns `{Self}`",
    note = "the handler renders the proposed output as text for the model to review: return a `String`, e.g. `format!(\"{{output:?}}\")`"
)]
pub trait ReflectionText: Into<String> {}

#[diagnostic::do_not_recommend]
impl<S: Into<String>> ReflectionText for S {}

/// A validator for output type `O`: `Fn(&O) -> Result<(), E>` with `E: Display`.
#[diagnostic::on_unimplemented(
    message = "a validator must be a `Fn(&{O}) -> Result<(), E>` with `E: Display`, `Send + Sync + 'static`",
    label = "not a validator for `{O}`",
    note = "a validator receives the output: `.validator(|output: &{O}| if ok {{ Ok(()) }} else {{ Err(\"why\") }})`"
)]
pub trait Validator<O>: Send + Sync + 'static {
    /// Checks `output`.
    fn check(&self, output: &O) -> Result<(), String>;
}

#[diagnostic::do_not_recommend]
impl<O, F, E> Validator<O> for F
where
    F: Fn(&O) -> Result<(), E> + Send + Sync + 'static,
    E: std::fmt::Display,
{
    fn check(&self, output: &O) -> Result<(), String> {
        self(output).map_err(|error| error.to_string())
    }
}

/// An async validator for output type `O`: `Fn(&O) -> impl Future<Output = Result<(), E>>`.
/// The future must own what it needs (clone fields out of the output).
#[diagnostic::on_unimplemented(
    message = "an async validator must be a `Fn(&{O}) -> impl Future<Output = Result<(), E>>` with `E: Display`",
    label = "expected `Fn(&{O}) -> impl Future<Output = Result<(), E>> + Send + 'static`",
    note = "clone what the check needs, then return an `async move` block"
)]
pub trait AsyncValidator<O>: Send + Sync + 'static {
    /// Checks `output`.
    fn check(&self, output: &O) -> crate::BoxFuture<'static, Result<(), String>>;
}

#[diagnostic::do_not_recommend]
impl<O, F, Fut, E> AsyncValidator<O> for F
where
    F: Fn(&O) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: std::fmt::Display,
{
    fn check(&self, output: &O) -> crate::BoxFuture<'static, Result<(), String>> {
        let future = self(output);
        Box::pin(async move { future.await.map_err(|error| error.to_string()) })
    }
}
