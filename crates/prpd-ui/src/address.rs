//! Where the dashboard listens, and which `Host` it answers. It binds to the loopback
//! interface unless told otherwise with an explicit flag, because it serves plain HTTP: on any
//! other interface the runs, and the token when a person types it, cross the network
//! unencrypted.
//!
//! A page of another site can still reach a loopback server by giving its own name a loopback
//! address (DNS rebinding). The browser then sends that name as `Host`, so a local dashboard
//! answers only requests that name it by a loopback address or `localhost`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs as _};

use crate::UiError;

/// The address `prpd ui` binds when given none.
pub const DEFAULT: &str = "127.0.0.1:7420";

/// Who may reach the dashboard: this machine only, or anyone who can reach the address (the
/// explicit `--public`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    Loopback,
    Public,
}

/// Reads `text` (`HOST:PORT`, a port of 0 picks a free one) as the address to bind; one off
/// the loopback interface needs [`Exposure::Public`].
pub fn parse(text: &str, exposure: Exposure) -> Result<SocketAddr, UiError> {
    let address = text
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| UiError::Address {
            given: text.to_owned(),
            problem: "expected HOST:PORT, such as 127.0.0.1:7420 (port 0 picks a free one)",
        })?;
    if !address.ip().is_loopback() && exposure == Exposure::Loopback {
        return Err(UiError::Address {
            given: text.to_owned(),
            problem: "that is not a loopback address; the dashboard serves plain HTTP, so \
                      binding it where others can reach it needs --public (and then the runs \
                      and the token cross the network unencrypted)",
        });
    }
    Ok(address)
}

/// The URL a person on this machine opens for a dashboard bound at `bound`: an unspecified
/// address (`0.0.0.0`, `::`) is reached through the loopback one.
pub fn url(bound: SocketAddr) -> String {
    let mut reachable = bound;
    match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => reachable.set_ip(Ipv4Addr::LOCALHOST.into()),
        IpAddr::V6(ip) if ip.is_unspecified() => reachable.set_ip(Ipv6Addr::LOCALHOST.into()),
        IpAddr::V4(_) | IpAddr::V6(_) => {}
    }
    format!("http://{reachable}/")
}

/// Whether a request with this `Host` header may be answered: a loopback dashboard answers
/// only a loopback address or `localhost` (any port: a tunnel or a proxy may forward another
/// one); a public one answers any name.
pub fn host_is_allowed(host: Option<&str>, exposure: Exposure) -> bool {
    if exposure == Exposure::Public {
        return true;
    }
    let Some(host) = host else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_binds_without_a_flag_and_others_need_public() {
        assert_eq!(
            parse("127.0.0.1:0", Exposure::Loopback)
                .expect("loopback")
                .ip(),
            IpAddr::from([127, 0, 0, 1])
        );
        assert!(parse("[::1]:7420", Exposure::Loopback).is_ok());
        let refused = parse("0.0.0.0:7420", Exposure::Loopback).expect_err("needs --public");
        assert!(refused.to_string().contains("--public"), "{refused}");
        let public = parse("0.0.0.0:7420", Exposure::Public).expect("public");
        assert_eq!(url(public), "http://127.0.0.1:7420/");
        assert_eq!(url("[::]:80".parse().expect("v6")), "http://[::1]:80/");
        let bad = parse("7420", Exposure::Loopback).expect_err("no host");
        assert!(bad.to_string().contains("HOST:PORT"), "{bad}");
    }

    #[test]
    fn only_loopback_names_are_answered() {
        for host in [
            "127.0.0.1:7420",
            "localhost:7420",
            "LOCALHOST:8000",
            "[::1]:7420",
            "127.0.0.1",
            "localhost",
        ] {
            assert!(host_is_allowed(Some(host), Exposure::Loopback), "{host}");
        }
        for host in [
            "evil.example:7420",
            "localhost.evil.example:7420",
            "127.0.0.1.evil.example",
            "[::2]:7420",
            "",
        ] {
            assert!(!host_is_allowed(Some(host), Exposure::Loopback), "{host}");
        }
        assert!(!host_is_allowed(None, Exposure::Loopback));
        assert!(host_is_allowed(Some("evil.example:7420"), Exposure::Public));
    }
}
