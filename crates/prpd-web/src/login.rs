//! Signing in before a walk: with `[plan.auth] login_url` set and both credential variables in
//! the environment, prpd opens the login page, types the username into the login form's text
//! or email field and the password into its password field (as placeholders filled just
//! before typing, like the planner's `fill`), submits, and walks the app with the session's
//! cookies, leaving the sign-out links (`logout`, `sign-out`, …) alone. The one form prpd
//! submits without an agent, because the user asked for it; the transcript records the
//! placeholders and where the submit led, never a value.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::json;

use super::exploration::{Exploration, ExploreError};
use super::graph::ElementSummary;

/// The addresses a signed-in walk does not visit: following one would end the session.
static SIGN_OUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(log|sign)[-_]?(out|off)")
        .unwrap_or_else(|error| unreachable!("a valid pattern: {error}"))
});

/// The sign-in failed before it could be tried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    #[error("{url} has no form with a password field to sign in with")]
    NoForm { url: String },
    #[error("`[plan.auth] login_url` = {url:?} is not on the app's origin ({reason})")]
    OutOfScope { url: String, reason: &'static str },
}

/// Signs in when `[plan.auth]` says how and the credentials are set; `Ok(false)` when there is
/// nothing to do.
pub async fn sign_in(exploration: &mut Exploration) -> Result<bool, ExploreError> {
    let Some(auth) = exploration.config.auth.clone() else {
        return Ok(false);
    };
    let (Some(login_url), Some(user_var), Some(password_var)) =
        (auth.login_url, auth.username_var, auth.password_var)
    else {
        return Ok(false);
    };
    let user = format!("{{{{{user_var}}}}}");
    let password = format!("{{{{{password_var}}}}}");
    if exploration.fill_placeholders(&user) == user
        || exploration.fill_placeholders(&password) == password
    {
        exploration.log(
            "login-skipped",
            &json!({"reason": format!("{user_var} or {password_var} is not set")}),
        );
        return Ok(false);
    }
    let start = exploration.scope.start().clone();
    let url = exploration
        .scope
        .judge(&start, &login_url)
        .map_err(|(url, reason)| {
            ExploreError::Login(LoginError::OutOfScope {
                url,
                reason: reason.as_str(),
            })
        })?;
    let tab = exploration.tab().await?;
    tab.open(url.as_str()).await?;
    let page = tab.observe().await?;
    let node = super::graph::page_node("login", 0, &page, None);
    let field = |kinds: &[&str]| -> Option<&ElementSummary> {
        node.element_summary.iter().find(|element| {
            element
                .field
                .as_ref()
                .is_some_and(|rules| kinds.contains(&rules.input_type.as_str()))
        })
    };
    let css = |element: &ElementSummary| {
        element
            .locator_candidates
            .iter()
            .find(|locator| locator.strategy == "css")
            .map(|locator| locator.value.clone())
    };
    let Some(password_field) = field(&["password"]) else {
        return Err(ExploreError::Login(LoginError::NoForm {
            url: url.to_string(),
        }));
    };
    let form = password_field.form.clone();
    let same_form = |element: &&ElementSummary| element.form == form;
    let user_field = node
        .element_summary
        .iter()
        .filter(same_form)
        .find(|element| {
            element
                .field
                .as_ref()
                .is_some_and(|rules| matches!(rules.input_type.as_str(), "text" | "email"))
        });
    let submit = node
        .element_summary
        .iter()
        .filter(same_form)
        .find(|element| element.kind == "button");
    let (Some(user_css), Some(password_css), Some(submit_css)) = (
        user_field.and_then(css),
        css(password_field),
        submit.and_then(css),
    ) else {
        return Err(ExploreError::Login(LoginError::NoForm {
            url: url.to_string(),
        }));
    };
    let (user_value, password_value) = (
        exploration.fill_placeholders(&user),
        exploration.fill_placeholders(&password),
    );
    let tab = exploration.tab().await?;
    tab.fill(&user_css, &user_value).await?;
    tab.fill(&password_css, &password_value).await?;
    tab.click(&submit_css).await?;
    let landed = tab.current_url().await?;
    exploration.scope.exclude_also(&SIGN_OUT);
    exploration.log(
        "login",
        &json!({"url": url.as_str(), "username": user, "password": password, "landedOn": landed}),
    );
    Ok(true)
}
