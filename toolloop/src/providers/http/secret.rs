//! Secrets (API keys) that never show themselves, and URLs and names as
//! they may be shown.

use std::fmt;

/// A secret (an API key, a credential header). Its `Debug` prints `<redacted>` and it has no `Display`, so
/// it cannot end up in logs or error messages by accident.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one header that carries it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `url` as it may be shown (in `Debug`, errors, logs): the password of
/// its userinfo replaced by `***`, and the value of every query parameter
/// but those known to be plain ([`PLAIN_PARAMETERS`]), since gateways take
/// keys there (`?subscription-key=`, `?sig=`, `?code=`). Works on text, so
/// that even a URL that does not parse is redacted: when its userinfo
/// cannot be told apart (a password with a `/`, `?` or `#` in it),
/// everything up to its last `@` is.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(start) = url.find("://").map(|index| index + 3) else { return url.to_owned() };
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (userinfo_end, redacted_userinfo) = match rest[..authority_end].rfind('@') {
        Some(at) => (at, rest[..at].find(':').map(|colon| format!("{}:***", &rest[..colon]))),
        // In a URL that does not parse, an `@` past the authority after a
        // `:` may end a password holding `/`, `?` or `#`.
        None => match rest.rfind('@') {
            Some(at) if rest[..at].contains(':') && reqwest::Url::parse(url).is_err() => (at, Some("***".to_owned())),
            _ => (0, None),
        },
    };
    let mut shown = url[..start].to_owned();
    let after = match redacted_userinfo {
        Some(userinfo) => {
            shown.push_str(&userinfo);
            &rest[userinfo_end..]
        }
        None => rest,
    };
    let (before_fragment, fragment) = after.split_at(after.find('#').unwrap_or(after.len()));
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            shown.push_str(path);
            shown.push('?');
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _)) if !PLAIN_PARAMETERS.contains(&name.to_ascii_lowercase().as_str()) => {
                        format!("{name}=***")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            shown.push_str(&pairs.join("&"));
        }
        None => shown.push_str(before_fragment),
    }
    shown.push_str(fragment);
    shown
}

/// Query parameters whose values are shown: how a response is framed
/// (Gemini's `alt=sse`) and which API version is asked for (Azure's).
const PLAIN_PARAMETERS: &[&str] = &["alt", "api-version", "beta"];

/// Whether a header or query parameter of this name carries a credential:
/// one of its words (split at `-`, `_` and where a lower-case letter meets
/// an upper-case one) marks one (`x-api-key`, `Authorization`,
/// `x-gateway-token`, `subscription-key`, `access_token`, `accessToken`),
/// or the whole name is a query key's (`sig`, `code`). Not `HTTP-Referer`,
/// `openai-beta`, `author` or `country_code`.
pub(crate) fn is_credential(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "auth",
        "authorization",
        "authentication",
        "oauth",
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "cookie",
        "session",
        "credential",
        "credentials",
        "signature",
    ];
    const NAMES: &[&str] = &["sig", "code"];
    if NAMES.contains(&name.to_ascii_lowercase().as_str()) {
        return true;
    }
    let mut words: Vec<String> = vec![String::new()];
    let mut previous_lower = false;
    for character in name.chars() {
        if !character.is_ascii_alphanumeric() {
            words.push(String::new());
            previous_lower = false;
            continue;
        }
        if character.is_ascii_uppercase() && previous_lower {
            words.push(String::new());
        }
        previous_lower = character.is_ascii_lowercase();
        words.last_mut().expect("one word at least").push(character.to_ascii_lowercase());
    }
    words.iter().any(|word| WORDS.contains(&word.as_str()))
}

#[cfg(test)]
mod tests {
    use super::{Secret, redact_url};

    #[test]
    fn debug_redacts_the_key() {
        let key = Secret::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(key.clone())), "Some(<redacted>)");
        assert_eq!(key.expose(), "sk-secret-123");
    }

    #[test]
    fn credentials_are_named_by_words() {
        use super::is_credential;
        for name in
            ["Authorization", "x-api-key", "x-goog-api-key", "x-gateway-token", "subscription-key", "sig", "code"]
        {
            assert!(is_credential(name), "{name}");
        }
        for name in ["HTTP-Referer", "X-Title", "openai-beta", "author", "keyword", "country_code", "alt"] {
            assert!(!is_credential(name), "{name}");
        }
    }

    #[test]
    fn passwords_and_query_values_in_urls_are_redacted() {
        assert_eq!(redact_url("http://u:p%40ss@h:1/v1?a=b@c"), "http://u:***@h:1/v1?a=***");
        assert_eq!(redact_url("http://user@h/"), "http://user@h/");
        assert_eq!(redact_url("http://h/a/b@c"), "http://h/a/b@c");
        // A URL that parses keeps its host, whatever `@` and `:` it holds past it.
        assert_eq!(redact_url("http://h/a:b@c"), "http://h/a:b@c");
        assert_eq!(redact_url("http://h:8080/v1/m@x"), "http://h:8080/v1/m@x");
        assert_eq!(
            redact_url("https://gw:8443/v1?user=a@b.com&subscription-key=SECRET"),
            "https://gw:8443/v1?user=***&subscription-key=***"
        );
        assert_eq!(redact_url("not a url"), "not a url");
        // A password with a `#`, `?` or `/` (the URL does not parse): all up to the last `@` goes.
        assert_eq!(redact_url("http://u:pa#ss@h/v1"), "http://***@h/v1");
        assert_eq!(redact_url("http://u:p/a?s@h/v1"), "http://***@h/v1");
        // Gateways' keys in the query; the framing and the version stay.
        assert_eq!(
            redact_url("https://gw.example/v1?subscription-key=k1&alt=sse&api-version=2024-10-21&sig=s2#top"),
            "https://gw.example/v1?subscription-key=***&alt=sse&api-version=2024-10-21&sig=***#top"
        );
        assert_eq!(redact_url("https://h/v1?flag&x="), "https://h/v1?flag&x=***");
    }
}
