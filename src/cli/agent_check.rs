//! What `prpd init` can tell about each configured agent before a run: whether its CLI is
//! installed, whether a key it sends is set (or a login it keeps exists), and whether the
//! endpoint a base-URL variable points it at accepts a connection. An agent that cannot reach
//! its model otherwise shows itself only in the first iteration of the first run; here it is a
//! plain line at once. Variables are named, never shown: a key's value reaches no output, and of
//! an endpoint only its scheme, host and port. Nothing found here fails `init`: a key may come
//! from somewhere prpd does not look (a keychain, a gateway that needs none), so what is missing
//! is a warning that says what the CLI reads.
//!
//! The endpoint check is a TCP connection with a short timeout, made directly: it says whether
//! something listens there, not whether the provider accepts the key, and behind a proxy the CLI
//! may reach what prpd cannot (the line says so).

use std::fmt::Write as _;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use prpd_base::phase::Phase;
use prpd_base::process;
use prpd_run::agent;
use prpd_run::config::{Agents, Preset};

/// How long the endpoint may take to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Proxy variables: with one set, the CLI may reach an endpoint that a direct connection
/// cannot.
const PROXIES: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The lines `prpd init` prints about every `[agents.<key>]` table of `agents`, run from `repo`.
pub fn report(agents: &Agents, repo: &Path) -> String {
    let mut out = String::new();
    let mut seen: Vec<String> = Vec::new();
    let path = std::env::var_os("PATH");
    for phase in Phase::ITERATING {
        let key = agents.command_key(phase);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let config = agents.for_phase(phase);
        let Some(program) = config.command.first() else {
            continue;
        };
        let installed = match process::find_program(program, repo, path.as_deref()) {
            Ok(file) => format!("`{program}` found at {}", file.display()),
            Err(_) => format!("warning: `{program}` is not installed or not on PATH"),
        };
        let _ = writeln!(out, "[agents.{key}]: {installed}");
        let Some(needs) = agent::needs(config) else {
            let _ = writeln!(
                out,
                "  a command prpd does not know: it cannot tell which key or endpoint it needs"
            );
            continue;
        };
        for line in key_lines(&needs, &key, config.model.as_deref()) {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(out, "  {}", endpoint_line(&needs));
    }
    out
}

/// What was found about the key `needs` describes.
fn key_lines(needs: &agent::Needs, table: &str, model: Option<&str>) -> Vec<String> {
    let mut lines = Vec::new();
    let login = needs.login.as_ref().map(|file| file.display().to_string());
    match (needs.key_passed, &login) {
        (Some(name), _) => lines.push(format!("key: {name} is set")),
        (None, Some(file)) => lines.push(format!("key: a login is found ({file})")),
        (None, None) if needs.keys.is_empty() => lines.push(format!(
            "key: prpd cannot tell which variable the provider of model `{}` reads; {}",
            model.unwrap_or("?"),
            agent::advice(needs.cli)
        )),
        (None, None) => lines.push(format!(
            "warning: no key: {} {} not set{}; {}",
            needs.keys.join(" and "),
            if needs.keys.len() == 1 { "is" } else { "are" },
            match needs.cli {
                Preset::ClaudeCode | Preset::Codex => " and no login was found",
                Preset::Aider => "",
            },
            agent::advice(needs.cli)
        )),
    }
    if !needs.keys_withheld.is_empty() {
        lines.push(format!(
            "warning: {} is set, but `env` in [agents.{table}] withholds it from the agent",
            needs.keys_withheld.join(" and ")
        ));
    }
    if needs.key_passed.is_none() && login.is_none() {
        for name in &needs.ignored {
            lines.push(format!(
                "warning: {name} is set, but {} sends no key from it: set CODEX_API_KEY, or run \
                 `codex login --with-api-key`",
                cli_name(needs.cli)
            ));
        }
    }
    lines
}

/// What was found about the endpoint `needs` describes.
fn endpoint_line(needs: &agent::Needs) -> String {
    let Some((name, url)) = &needs.endpoint else {
        return match needs.cli {
            Preset::Codex => "endpoint: OPENAI_BASE_URL is not set: Codex's own configuration \
                              ($CODEX_HOME/config.toml) decides where it goes"
                .to_owned(),
            Preset::ClaudeCode | Preset::Aider => {
                "endpoint: no base-URL variable is set: the provider's own".to_owned()
            }
        };
    };
    let passed_on = match needs.cli {
        Preset::Codex => " (prpd passes it to Codex as `-c openai_base_url=…`)",
        Preset::ClaudeCode | Preset::Aider => "",
    };
    let Some(endpoint) = Endpoint::parse(url) else {
        return format!("warning: endpoint: {name} is not a URL prpd can read{passed_on}");
    };
    match endpoint.connect() {
        Ok(()) => format!("endpoint: {name} = {endpoint} accepts connections{passed_on}"),
        Err(error) => {
            let proxy = if PROXIES.iter().any(|name| std::env::var_os(name).is_some()) {
                " (a proxy is set, which the CLI may use; prpd tried directly)"
            } else {
                ""
            };
            format!(
                "warning: endpoint: {name} = {endpoint} cannot be reached: {error}{proxy}{passed_on}"
            )
        }
    }
}

fn cli_name(cli: Preset) -> &'static str {
    match cli {
        Preset::ClaudeCode => "Claude Code",
        Preset::Codex => "Codex CLI",
        Preset::Aider => "Aider",
    }
}

/// The scheme, host and port of a base URL; its user, password, path and query are left out.
#[derive(Debug, PartialEq, Eq)]
struct Endpoint {
    scheme: String,
    host: String,
    port: u16,
}

impl Endpoint {
    fn parse(url: &str) -> Option<Endpoint> {
        let (scheme, rest) = url.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let authority = rest.split(['/', '?', '#']).next()?;
        let authority = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, after) = bracketed.split_once(']')?;
            (host, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        let port = match (port, scheme.as_str()) {
            (Some(port), _) => port.parse().ok()?,
            (None, "https" | "wss") => 443,
            (None, "http" | "ws") => 80,
            (None, _) => return None,
        };
        (!host.is_empty()).then(|| Endpoint {
            scheme,
            host: host.to_owned(),
            port,
        })
    }

    /// Opens a TCP connection to the endpoint (any of its addresses) and closes it.
    fn connect(&self) -> Result<(), String> {
        let addresses = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|error| format!("cannot resolve {}: {error}", self.host))?;
        let mut last = "it has no address".to_owned();
        for address in addresses {
            match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
                Ok(_) => return Ok(()),
                Err(error) => last = error.to_string(),
            }
        }
        Err(last)
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(formatter, "{}://[{}]:{}", self.scheme, self.host, self.port)
        } else {
            write!(formatter, "{}://{}:{}", self.scheme, self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_read_without_its_credentials_or_path() {
        let endpoint = |url: &str| Endpoint::parse(url).map(|endpoint| endpoint.to_string());
        assert_eq!(
            endpoint("http://127.0.0.1:4000/v1").as_deref(),
            Some("http://127.0.0.1:4000")
        );
        assert_eq!(
            endpoint("https://user:secret@gateway.example/openai?x=1").as_deref(),
            Some("https://gateway.example:443")
        );
        assert_eq!(
            endpoint("http://[::1]:8080").as_deref(),
            Some("http://[::1]:8080")
        );
        assert_eq!(endpoint("gateway.example"), None);
        assert_eq!(endpoint("ftp://host"), None);
    }
}
