//! Reports as HTML: the QA report, the escalation report and the receipt are Markdown that
//! quotes what agents wrote, so they are rendered with raw HTML turned into visible text,
//! links only to `http`, `https`, `mailto` or within the page, and images shown as links (a
//! report must not make the browser fetch anything, nor run anything).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// `markdown` as safe HTML.
pub fn render(markdown: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(
            Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }
            | Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            },
        ) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// The URL when it is one a report may link to, else `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim_start().to_ascii_lowercase();
    let scheme = lower
        .split_once(':')
        .map(|(scheme, _)| scheme)
        .filter(|scheme| !scheme.contains(['/', '?', '#']));
    match scheme {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => CowStr::Borrowed("#"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = render(
            "Output:\n\n<script>alert(1)</script>\n\nand <img src=x onerror=alert(2)> inline",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
    }

    #[test]
    fn links_keep_safe_schemes_and_images_become_links() {
        let html = render(
            "[a](javascript:alert(1)) [b](https://example.com/x) [c](#f2p) [d](iterations/x.md) \
             [e](JaVaScRiPt:alert(1)) ![pixel](https://tracker.example/p.gif) [f](data:text/html,x)",
        );
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.to_ascii_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("href=\"https://example.com/x\""), "{html}");
        assert!(html.contains("href=\"#f2p\""), "{html}");
        assert!(html.contains("href=\"iterations/x.md\""), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("<a href=\"https://tracker.example/p.gif\">pixel</a>"),
            "{html}"
        );
    }

    #[test]
    fn disguised_schemes_do_not_pass() {
        let html = render(
            "<javascript:alert(1)> [a](&#106;avascript:alert(1)) [b](java&#9;script:alert(1)) \
             [c][r] [d](https://x.example \"a \\\"quoted\\\" title\")\n\n[r]: javascript:alert(1)\n",
        );
        let hrefs: Vec<&str> = html
            .split("href=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert_eq!(hrefs, ["#", "#", "#", "#", "https://x.example"], "{html}");
        assert!(
            html.contains("title=\"a &quot;quoted&quot; title\""),
            "{html}"
        );
    }

    #[test]
    fn tables_render() {
        let html = render("| a | b |\n|---|---|\n| 1 | <b>2</b> |\n");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("&lt;b&gt;2&lt;/b&gt;"), "{html}");
    }
}
