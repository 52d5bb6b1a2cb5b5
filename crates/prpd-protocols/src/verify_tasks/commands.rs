//! The commands of a `[VERIFY]` task's line, one by one (pure): `a && b && c` is three commands,
//! each run and reported on its own, in order, as the seed's output lists them. The split is
//! at top-level `&&` only: inside quotes, `$(…)`, backticks or parentheses it is part of a
//! command. A `cd DIR` step changes nothing on its own when each command runs in its own shell,
//! so it is carried into every command after it, as the shell would have carried it
//! (`cd web && npm test && npm run build` is `cd web && npm test`, `cd web && npm run build`).

/// The commands of `text` (what follows a task's colon), in order.
pub fn split_commands(text: &str) -> Vec<String> {
    let text = text.trim();
    let text = match text
        .strip_prefix('`')
        .and_then(|rest| rest.strip_suffix('`'))
    {
        Some(inner) if !inner.contains('`') => inner,
        Some(_) | None => text,
    };
    let mut commands: Vec<String> = Vec::new();
    let mut directory_steps: Vec<&str> = Vec::new();
    let mut trailing_cd = false;
    for part in top_level_parts(text) {
        let part = unquoted(part.trim());
        if part.is_empty() {
            continue;
        }
        if is_cd(part) {
            directory_steps.push(part);
            trailing_cd = true;
            continue;
        }
        trailing_cd = false;
        let mut command = directory_steps.join(" && ");
        if !command.is_empty() {
            command.push_str(" && ");
        }
        command.push_str(part);
        commands.push(command);
    }
    if trailing_cd {
        commands.push(directory_steps.join(" && "));
    }
    commands
}

/// `` `npm test` `` → `npm test`: a command written as inline code.
fn unquoted(part: &str) -> &str {
    match part
        .strip_prefix('`')
        .and_then(|rest| rest.strip_suffix('`'))
    {
        Some(inner) if !inner.contains('`') => inner.trim(),
        Some(_) | None => part,
    }
}

/// A step that only changes directory (`cd web`, `cd "my dir"`).
fn is_cd(part: &str) -> bool {
    part.split_whitespace().next() == Some("cd")
}

/// `text` cut at every `&&` outside quotes, backticks, `$(…)` and parentheses.
fn top_level_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut start = 0;
    let mut characters = text.char_indices().peekable();
    while let Some((at, character)) = characters.next() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, character) {
            (Some('\''), '\'') | (Some('"'), '"') | (Some('`'), '`') => quote = None,
            (Some('"' | '`') | None, '\\') => escaped = true,
            (None, '\'' | '"' | '`') => quote = Some(character),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, '&') if depth == 0 && characters.peek().map(|&(_, next)| next) == Some('&') => {
                parts.push(&text[start..at]);
                characters.next();
                start = at + 2;
            }
            (Some(_) | None, _) => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_split_at_top_level_ands_only() {
        let cases: [(&str, &[&str]); 13] = [
            ("", &[]),
            ("npm test", &["npm test"]),
            (
                "pnpm lint && pnpm typecheck && pnpm test && pnpm build",
                &["pnpm lint", "pnpm typecheck", "pnpm test", "pnpm build"],
            ),
            ("  make lint&&make test  ", &["make lint", "make test"]),
            (
                "`npm run lint` && `npm test`",
                &["npm run lint", "npm test"],
            ),
            ("`npm run lint && npm test`", &["npm run lint", "npm test"]),
            (
                "pytest -k 'a && b' && ruff check",
                &["pytest -k 'a && b'", "ruff check"],
            ),
            (
                "sh -c \"make && make check\" && echo \\&\\& done",
                &["sh -c \"make && make check\"", "echo \\&\\& done"],
            ),
            (
                "(cd web && npm test) && npm run build",
                &["(cd web && npm test)", "npm run build"],
            ),
            ("test \"$(a && b)\" = x", &["test \"$(a && b)\" = x"]),
            (
                "cd web && npm test && cd ../api && cargo test",
                &["cd web && npm test", "cd web && cd ../api && cargo test"],
            ),
            (
                "make lint || true && make test",
                &["make lint || true", "make test"],
            ),
            ("npm test && && cd docs", &["npm test", "cd docs"]),
        ];
        for (text, expected) in cases {
            assert_eq!(split_commands(text), expected, "{text}");
        }
    }
}
