//! Picking a provider from the environment.

use super::http::{EnvLookup, process_env};
use crate::build_error::BuildError;
use crate::model::Model;

/// The model the environment configures, for programs that run on whichever
/// provider is available (examples, command-line tools).
///
/// Looks, in order, for `ANTHROPIC_API_KEY`, then `OPENAI_API_KEY` (or
/// `OPENAI_BASE_URL` alone, for a compatible server that needs no key), then
/// `GEMINI_API_KEY`, then `OLLAMA_HOST`, honouring the base URL variables
/// (`GOOGLE_API_KEY`, which many Google APIs share, is read by
/// [`Gemini::from_env`](crate::providers::gemini::Gemini) but picks no provider here); the first one set wins,
/// with that provider's default model. Only providers enabled by cargo
/// features are considered. `Ok(None)` when none is set.
///
/// ```no_run
/// match toolloop::providers::from_env()? {
///     Some(model) => println!("using {} ({})", model.name(), model.provider()),
///     None => println!("no provider configured; using a scripted model"),
/// }
/// # Ok::<(), toolloop::BuildError>(())
/// ```
pub fn from_env() -> Result<Option<Box<dyn Model>>, BuildError> {
    from_lookup(&process_env)
}

/// The model the environment configures ([`from_env`]), or `offline` when
/// it configures none: for programs that run live when a key is set and on a
/// test model otherwise (examples, demos, smoke tests).
///
/// ```
/// use toolloop::testing::ScriptedModel;
/// use toolloop::{Model, ModelResponse};
///
/// let model = toolloop::providers::from_env_or(ScriptedModel::new().respond(ModelResponse::from_text("hi")))?;
/// println!("using {} ({})", model.name(), model.provider());
/// # Ok::<(), toolloop::BuildError>(())
/// ```
pub fn from_env_or(offline: impl Model + 'static) -> Result<Box<dyn Model>, BuildError> {
    Ok(from_env()?.unwrap_or_else(|| Box::new(offline)))
}

pub(crate) fn from_lookup(env: EnvLookup<'_>) -> Result<Option<Box<dyn Model>>, BuildError> {
    #[cfg(feature = "anthropic")]
    if env("ANTHROPIC_API_KEY").is_some() {
        return Ok(Some(Box::new(super::anthropic::AnthropicBuilder::from_lookup(env).build()?)));
    }
    #[cfg(feature = "openai")]
    if env("OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some() {
        return Ok(Some(Box::new(super::openai::OpenAiBuilder::from_lookup(env).build()?)));
    }
    #[cfg(feature = "gemini")]
    if env("GEMINI_API_KEY").is_some() {
        return Ok(Some(Box::new(super::gemini::GeminiBuilder::from_lookup(env).build()?)));
    }
    #[cfg(feature = "ollama")]
    if env("OLLAMA_HOST").is_some() {
        return Ok(Some(Box::new(super::ollama::OllamaBuilder::from_lookup(env).build()?)));
    }
    let _ = env;
    Ok(None)
}

#[cfg(all(test, feature = "anthropic", feature = "openai", feature = "ollama", feature = "gemini"))]
mod tests {
    use super::from_lookup;

    fn provider(vars: &[(&str, &str)]) -> Option<String> {
        let env = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned());
        from_lookup(&env).unwrap().map(|model| model.provider().to_owned())
    }

    #[test]
    fn the_first_configured_provider_wins() {
        let all = [
            ("ANTHROPIC_API_KEY", "a"),
            ("OPENAI_API_KEY", "o"),
            ("GEMINI_API_KEY", "g"),
            ("OLLAMA_HOST", "127.0.0.1:11434"),
        ];
        assert_eq!(provider(&all).as_deref(), Some("anthropic"));
        assert_eq!(provider(&all[1..]).as_deref(), Some("openai"));
        assert_eq!(provider(&[("OPENAI_BASE_URL", "http://localhost:8000/v1")]).as_deref(), Some("openai"));
        assert_eq!(provider(&all[2..]).as_deref(), Some("gemini"));
        assert_eq!(provider(&all[3..]).as_deref(), Some("ollama"));
        assert_eq!(provider(&[("GOOGLE_API_KEY", "g")]), None, "GOOGLE_API_KEY alone picks nothing");
        assert_eq!(provider(&[]), None);
    }
}
