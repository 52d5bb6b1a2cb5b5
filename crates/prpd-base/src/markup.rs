//! Text put into HTML or XML that prpd writes (the dashboard's pages, the timeline's SVG).
//! What goes in comes from agents, tests and people, so it is escaped in one place, the same
//! way for both: the five characters that mean something become entities, and the control
//! characters XML cannot carry (a test runner's colour codes, say) become U+FFFD.

/// `text` fit for character data and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            other if other.is_control() && !matches!(other, '\t' | '\n' | '\r') => {
                out.push('\u{fffd}');
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\"\u{1b}[31m\n"),
            "&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;q&quot;\u{fffd}[31m\n"
        );
    }
}
