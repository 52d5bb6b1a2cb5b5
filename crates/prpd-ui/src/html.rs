//! HTML written by hand, with one rule: every string that comes from a run — what an agent
//! wrote, a PRP, a report, a path, a test name — goes through [`escape`] before it reaches a
//! page. The pages are plain server-rendered HTML with one stylesheet and one script of prpd's
//! own, so they work offline and weigh little.

use std::fmt::Write as _;

pub use prpd_base::markup::escape;

/// A whole page: the title, the stylesheet, the script, and `main` (already HTML), marked with
/// the `version` of the state it shows (a live update replaces `main` when the state moved on).
/// The flash line sits outside `main`, so a live update keeps what an action answered.
pub fn page(title: &str, version: u64, main: &str) -> String {
    let mut html = String::with_capacity(main.len() + 1024);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · prpd</title><link rel=\"stylesheet\" href=\"/assets/app.css\">\
         <script src=\"/assets/app.js\" defer></script></head>\n<body>\
         <header><a href=\"/\" class=\"home\">prpd</a><span id=\"live\" title=\"live updates\">\
         </span></header>\n<p id=\"flash\" role=\"status\"></p>\n<main data-version=\"{version}\">{main}</main>\n\
         </body></html>\n",
        title = escape(title),
    );
    html
}

/// A preformatted block of `text`, escaped.
pub fn pre(class: &str, text: &str) -> String {
    format!("<pre class=\"{class}\">{}</pre>", escape(text))
}

/// A unified diff as a preformatted block, each added, removed and hunk line marked for the
/// stylesheet.
pub fn diff(text: &str) -> String {
    let mut html = String::from("<pre class=\"diff\">");
    for line in text.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            "file"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else if line.starts_with("diff ") {
            "file"
        } else {
            ""
        };
        let _ = writeln!(html, "<span class=\"{class}\">{}</span>", escape(line));
    }
    html.push_str("</pre>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_run_wrote_is_text_not_markup() {
        let hostile = "<script>alert('x')</script> & \"quoted\"";
        let escaped = escape(hostile);
        assert_eq!(
            escaped,
            "&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;quoted&quot;"
        );
        assert!(!pre("output", hostile).contains("<script"));
        assert!(!diff(&format!("+{hostile}")).contains("<script"));
        assert!(!page(hostile, 0, "").contains("<script>alert"));
    }

    #[test]
    fn a_diff_marks_its_lines() {
        let html = diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same");
        assert!(html.contains("<span class=\"del\">-old</span>"), "{html}");
        assert!(html.contains("<span class=\"add\">+new</span>"), "{html}");
        assert!(
            html.contains("<span class=\"hunk\">@@ -1 +1 @@</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"file\">+++ b/x</span>"),
            "{html}"
        );
    }
}
