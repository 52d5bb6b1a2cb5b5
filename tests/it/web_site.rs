//! `Site`: a tiny web app served by the test itself on `127.0.0.1:0`, for `prpd plan`
//! (`web_plan.rs`). HTTP/1.1 with `Connection: close`, a thread per connection, GET only
//! (anything else is answered 405), pages from a map of path → page (or a redirect), an unknown
//! path 404, and
//! a count of the requests each path received, so a test can prove what the browser asked for
//! and what it never did. Dropping the site stops it: the listener closes and slow answers
//! still waiting end at once.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One page of a [`Site`].
#[derive(Debug, Clone)]
pub struct Page {
    pub status: u16,
    pub html: String,
    /// How long the server waits before it answers.
    pub delay: Duration,
    /// Where a redirect sends the browser.
    pub location: Option<String>,
}

impl Page {
    /// A `200 OK` page titled `title` with `body` (HTML).
    pub fn new(title: &str, body: &str) -> Page {
        Page {
            status: 200,
            html: format!(
                "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\n\
                 <body>\n{body}\n</body></html>\n"
            ),
            delay: Duration::ZERO,
            location: None,
        }
    }

    /// A `303 See Other` to `location`.
    pub fn redirect(location: &str) -> Page {
        Page {
            status: 303,
            location: Some(location.to_owned()),
            ..Page::new("Moved", "<p>Moved.</p>")
        }
    }

    /// The same page, answered only after `delay`.
    pub fn slow(mut self, delay: Duration) -> Page {
        self.delay = delay;
        self
    }
}

/// What the server threads share.
#[derive(Debug, Default)]
struct Shared {
    pages: HashMap<String, Page>,
    requests: Mutex<HashMap<String, usize>>,
    stopping: AtomicBool,
}

/// A running site; stopped when dropped.
#[derive(Debug)]
pub struct Site {
    address: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl Site {
    /// Serves `pages` (path without query → page) on a free port of 127.0.0.1.
    pub fn serve(pages: HashMap<String, Page>) -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let address = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            pages,
            ..Shared::default()
        });
        let accepting = Arc::clone(&shared);
        let acceptor = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let answering = Arc::clone(&accepting);
                std::thread::spawn(move || answer(stream, &answering));
            }
        });
        Site {
            address,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT` followed by `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// How many requests `path` received (any method, query aside).
    pub fn requests(&self, path: &str) -> usize {
        self.requests_by_path().get(path).copied().unwrap_or(0)
    }

    /// How many requests the site received in all.
    pub fn total_requests(&self) -> usize {
        self.requests_by_path().values().sum()
    }

    /// Every path asked for, with its count.
    pub fn requests_by_path(&self) -> HashMap<String, usize> {
        self.shared.requests.lock().expect("request counts").clone()
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // The acceptor blocks in accept(): one more connection wakes it to see the flag.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Reads one request and answers it; a connection that never sends one (a browser's
/// preconnect) times out quietly.
fn answer(mut stream: TcpStream, shared: &Shared) {
    if shared.stopping.load(Ordering::SeqCst) {
        return;
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !request.windows(4).any(|window| window == b"\r\n\r\n") && request.len() < 64 * 1024 {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => request.extend_from_slice(&buffer[..read]),
        }
    }
    let request = String::from_utf8_lossy(&request);
    let mut words = request.lines().next().unwrap_or_default().split(' ');
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or("/"),
    );
    let path = target.split(['?', '#']).next().unwrap_or("/").to_owned();
    *shared
        .requests
        .lock()
        .expect("request counts")
        .entry(path.clone())
        .or_default() += 1;
    let page = if method == "GET" {
        shared.pages.get(&path).cloned().unwrap_or_else(|| Page {
            status: 404,
            ..Page::new("Not found", "<h1>Not found</h1><p>No such page.</p>")
        })
    } else {
        Page {
            status: 405,
            ..Page::new(
                "Method not allowed",
                "<h1>Method not allowed</h1><p>This site answers GET only.</p>",
            )
        }
    };
    let deadline = Instant::now() + page.delay;
    while Instant::now() < deadline {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let reason = match page.status {
        200 => "OK",
        303 => "See Other",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Status",
    };
    let location = page
        .location
        .map(|location| format!("Location: {location}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         {location}Allow: GET\r\nConnection: close\r\n\r\n",
        page.status,
        page.html.len()
    );
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(page.html.as_bytes()));
}

/// The example app the tests explore; its home page links to `external` (another site that
/// must never be asked for anything).
///
/// ```text
/// /            home: about, login, signup, docs/one, loop/a, a GET search form, mailto:,
///              the external site, /missing (404)
/// /docs/one → /docs/two → /docs/three            (depth 1, 2, 3)
/// /loop/a ⇄ /loop/b, both back home                (a link loop)
/// /login       POST form: email + password
/// /signup      POST form: name (required, maxlength 20, data-testid), age (number 18..120)
/// /search      where the search form goes
/// ```
pub fn example_app(external: &Site) -> HashMap<String, Page> {
    let home = Page::new(
        "Home",
        &format!(
            "<h1>Welcome home</h1>\n<nav>\n<a href=\"/about\">About</a>\n<a href=\"/login\">Log in</a>\n\
             <a href=\"/signup\">Sign up</a>\n<a href=\"/docs/one\">Docs</a>\n<a href=\"/loop/a\">Loop</a>\n\
             <a href=\"mailto:team@example.test\">Write to us</a>\n\
             <a href=\"{}\">Partner site</a>\n<a href=\"/missing\">Old page</a>\n</nav>\n\
             <form action=\"/search\" method=\"get\" role=\"search\">\n\
             <label for=\"q\">Search the site</label> <input id=\"q\" type=\"search\" name=\"q\">\n\
             <button type=\"submit\">Search</button>\n</form>",
            external.url("/partner")
        ),
    );
    let pages = [
        ("/", home),
        (
            "/about",
            Page::new(
                "About",
                "<h1>About us</h1><p>A small app.</p><a href=\"/\">Home</a>",
            ),
        ),
        (
            "/login",
            Page::new(
                "Log in",
                "<h1>Log in</h1>\n<form action=\"/session\" method=\"post\">\n\
                 <label for=\"email\">Email</label> <input id=\"email\" type=\"email\" name=\"email\" required>\n\
                 <label for=\"password\">Password</label> <input id=\"password\" type=\"password\" name=\"password\" required>\n\
                 <button type=\"submit\">Sign in</button>\n</form>\n<a href=\"/\">Home</a>",
            ),
        ),
        (
            "/signup",
            Page::new(
                "Sign up",
                "<h1>Create an account</h1>\n<form action=\"/accounts\" method=\"post\">\n\
                 <label for=\"name\">Name</label> <input id=\"name\" name=\"name\" required maxlength=\"20\" data-testid=\"signup-name\">\n\
                 <label for=\"age\">Age</label> <input id=\"age\" type=\"number\" name=\"age\" min=\"18\" max=\"120\">\n\
                 <button type=\"submit\">Create account</button>\n</form>",
            ),
        ),
        (
            "/docs/one",
            Page::new(
                "Docs: one",
                "<h1>Docs one</h1><a href=\"/docs/two\">Next: two</a>",
            ),
        ),
        (
            "/docs/two",
            Page::new(
                "Docs: two",
                "<h1>Docs two</h1><a href=\"/docs/three\">Next: three</a>",
            ),
        ),
        (
            "/docs/three",
            Page::new("Docs: three", "<h1>Docs three</h1><p>The end.</p>"),
        ),
        (
            "/loop/a",
            Page::new(
                "Loop A",
                "<h1>Loop A</h1><a href=\"/loop/b\">To B</a> <a href=\"/\">Home</a>",
            ),
        ),
        (
            "/loop/b",
            Page::new(
                "Loop B",
                "<h1>Loop B</h1><a href=\"/loop/a\">To A</a> <a href=\"/\">Home</a>",
            ),
        ),
        (
            "/search",
            Page::new(
                "Search",
                "<h1>Search results</h1><p>Nothing found.</p><a href=\"/\">Home</a>",
            ),
        ),
    ];
    pages
        .into_iter()
        .map(|(path, page)| (path.to_owned(), page))
        .collect()
}
