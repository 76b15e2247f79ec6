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
        return Ok(Some(Box::new(super::anthropic::Anthropic::builder_from_lookup(env).build()?)));
    }
    #[cfg(feature = "openai")]
    if env("OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some() {
        return Ok(Some(Box::new(super::openai::OpenAi::builder_from_lookup(env).build()?)));
    }
    #[cfg(feature = "gemini")]
    if env("GEMINI_API_KEY").is_some() {
        return Ok(Some(Box::new(super::gemini::Gemini::builder_from_lookup(env).build()?)));
    }
    #[cfg(feature = "ollama")]
    if env("OLLAMA_HOST").is_some() {
        return Ok(Some(Box::new(super::ollama::Ollama::builder_from_lookup(env).build()?)));
    }
    let _ = env;
    Ok(None)
}

#[cfg(all(test, feature = "anthropic", feature = "openai", feature = "ollama", feature = "gemini"))]
mod tests {
    use super::from_lookup;
    use crate::BuildError;
    use crate::Model;
    use crate::providers::anthropic::{self, Anthropic};
    use crate::providers::gemini::{self, Gemini};
    use crate::providers::ollama::Ollama;
    use crate::providers::openai::{self, OpenAi, OpenAiResponses};
    use crate::providers::{HttpModel, WireFormat};

    fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    /// `built` posts to `endpoint`, names `provider` and `default_model`,
    /// switches models, and never shows `secret` in its `Debug` output.
    fn check<W: WireFormat>(
        built: Result<HttpModel<W>, BuildError>,
        endpoint: &str,
        (provider, default_model): (&str, &str),
        secret: &str,
    ) {
        let model = built.unwrap();
        assert_eq!(model.endpoint(), endpoint);
        assert_eq!((model.provider(), model.name()), (provider, default_model));
        let debug = format!("{model:?}");
        assert!(!debug.contains(secret), "{debug}");
        assert_eq!(model.with_model("other").name(), "other");
    }

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

    #[test]
    fn each_provider_is_configured_from_its_own_variables() {
        let vars = [("ANTHROPIC_API_KEY", "sk-ant-secret"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")];
        let built = Anthropic::builder_from_lookup(&lookup(&vars)).build();
        check(built, "http://127.0.0.1:9/v1/messages", ("anthropic", anthropic::DEFAULT_MODEL), "sk-ant-secret");
        let vars = [("OPENAI_API_KEY", "sk-secret"), ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")];
        let built = OpenAi::builder_from_lookup(&lookup(&vars)).build();
        check(built, "http://127.0.0.1:9/v1/chat/completions", ("openai", openai::DEFAULT_MODEL), "sk-secret");
        let built = OpenAiResponses::builder_from_lookup(&lookup(&vars)).build();
        check(built, "http://127.0.0.1:9/v1/responses", ("openai-responses", openai::DEFAULT_MODEL), "sk-secret");
        // Gemini takes the key many Google APIs share, too.
        let vars = [("GOOGLE_API_KEY", "AIza-google"), ("GEMINI_BASE_URL", "http://127.0.0.1:9/")];
        let built = Gemini::builder_from_lookup(&lookup(&vars)).build();
        check(built, "http://127.0.0.1:9/v1beta/models", ("gemini", gemini::DEFAULT_MODEL), "AIza-google");
        let vars = [("OLLAMA_HOST", "127.0.0.1:9")];
        let built = Ollama::builder_from_lookup(&lookup(&vars)).build();
        check(built, "http://127.0.0.1:9/api/chat", ("ollama", crate::providers::ollama::DEFAULT_MODEL), "-");
        let built = Ollama::builder_from_lookup(&lookup(&[])).api_key("proxy-secret").build();
        check(built, "http://localhost:11434/api/chat", ("ollama", "llama3.2"), "proxy-secret");
        // A compatible server given by its base URL may need no key.
        let local = [("OPENAI_BASE_URL", "http://localhost:8000/v1")];
        assert!(OpenAi::builder_from_lookup(&lookup(&local)).build().is_ok());
    }

    #[test]
    fn a_missing_key_names_the_variable_to_set() {
        let missing = |error: BuildError| match error {
            BuildError::MissingApiKey { variable } => variable,
            other => panic!("{other}"),
        };
        let none = lookup(&[]);
        assert_eq!(missing(Anthropic::builder_from_lookup(&none).build().unwrap_err()), "ANTHROPIC_API_KEY");
        assert_eq!(missing(OpenAi::builder_from_lookup(&none).build().unwrap_err()), "OPENAI_API_KEY");
        assert_eq!(missing(OpenAiResponses::builder_from_lookup(&none).build().unwrap_err()), "OPENAI_API_KEY");
        assert_eq!(missing(Gemini::builder_from_lookup(&none).build().unwrap_err()), "GEMINI_API_KEY");
    }

    #[test]
    fn no_builder_shows_its_key_in_debug_output() {
        let debug = [
            format!("{:?}", Anthropic::builder().api_key("secret-1")),
            format!("{:?}", OpenAi::builder().api_key("secret-1")),
            format!("{:?}", OpenAi::responses().api_key("secret-1")),
            format!("{:?}", Gemini::builder().api_key("secret-1")),
            format!("{:?}", Ollama::builder().api_key("secret-1")),
        ];
        for debug in debug {
            assert!(!debug.contains("secret-1"), "{debug}");
        }
    }
}
