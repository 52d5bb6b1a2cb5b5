//! When two model names mean the same model. QA must review with another model than GREEN
//! implements with, and a plain string comparison is fooled by the CLIs' aliases: Claude Code
//! and Aider resolve `sonnet` to the current Claude Sonnet, so `sonnet` and `claude-sonnet-4-5`
//! are one model. A provider prefix (`anthropic/`, `openai/`) and a date suffix name the same
//! model too.

/// Aliases the agent CLIs resolve to the newest model of a family.
const FAMILY_ALIASES: &[&str] = &["sonnet", "opus", "haiku"];

/// Whether `a` and `b` name the same model, once aliases, provider prefixes and case are
/// taken into account. Two full ids of different versions (`claude-sonnet-4` and
/// `claude-sonnet-4-5`) are different models.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (canonical(a), canonical(b));
    if a == b {
        return true;
    }
    let family = |alias: &str, id: &str| {
        FAMILY_ALIASES.contains(&alias)
            && id
                .split(['-', '.', '_', '@', ':'])
                .any(|part| part == alias)
    };
    family(&a, &b) || family(&b, &a)
}

/// The model named the way this module compares names: lower case, without a provider prefix
/// or a `-YYYYMMDD` date suffix.
pub fn canonical(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    match name.rsplit_once('-') {
        Some((stem, date)) if date.len() == 8 && date.bytes().all(|byte| byte.is_ascii_digit()) => {
            stem.to_owned()
        }
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_prefixes_and_dates_name_the_same_model() {
        let cases = [
            ("sonnet", "sonnet", true),
            ("sonnet", "claude-sonnet-5", true),
            ("claude-sonnet-4-5-20250929", "sonnet", true),
            ("anthropic/claude-opus-4-1", "opus", true),
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", true),
            ("GPT-5", "openai/gpt-5", true),
            ("sonnet", "opus", false),
            ("sonnet", "claude-opus-4-1", false),
            ("claude-sonnet-4", "claude-sonnet-4-5", false),
            ("gpt-5-codex", "gpt-5", false),
            ("haiku", "claude-3-5-haiku-latest", true),
        ];
        for (a, b, expected) in cases {
            assert_eq!(same(a, b), expected, "{a} vs {b}");
            assert_eq!(same(b, a), expected, "{b} vs {a}");
        }
    }
}
