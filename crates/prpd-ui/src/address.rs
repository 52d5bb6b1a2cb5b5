//! Where the dashboard listens, and which `Host` it answers. It binds to the loopback
//! interface unless told otherwise with an explicit flag, because it serves plain HTTP: on any
//! other interface the runs, and the token when a person types it, cross the network
//! unencrypted.
//!
//! A page of another site can still reach a loopback server by giving its own name a loopback
//! address (DNS rebinding). The browser then sends that name as `Host`, so a local dashboard
//! answers only requests that name it by a loopback address or `localhost`.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};

use crate::UiError;

/// The address `prpd ui` binds when given none.
pub const DEFAULT: &str = "127.0.0.1:7420";

/// Reads `text` (`HOST:PORT`, a port of 0 picks a free one) as the address to bind; one off
/// the loopback interface needs `public`.
pub fn parse(text: &str, public: bool) -> Result<SocketAddr, UiError> {
    let address = text
        .to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| UiError::Address {
            given: text.to_owned(),
            problem: "expected HOST:PORT, such as 127.0.0.1:7420 (port 0 picks a free one)"
                .to_owned(),
        })?;
    if !address.ip().is_loopback() && !public {
        return Err(UiError::Address {
            given: text.to_owned(),
            problem: "that is not a loopback address; the dashboard serves plain HTTP, so \
                      binding it where others can reach it needs --public (and then the runs \
                      and the token cross the network unencrypted)"
                .to_owned(),
        });
    }
    Ok(address)
}

/// Whether a request with this `Host` header is for the dashboard bound at `bound`: a loopback
/// address or `localhost`, with the bound port. A public dashboard answers any name.
pub fn host_is_allowed(host: Option<&str>, bound: SocketAddr, public: bool) -> bool {
    if public {
        return true;
    }
    let Some(host) = host else {
        return false;
    };
    let Some((name, port)) = host.rsplit_once(':') else {
        return false;
    };
    if port.parse::<u16>().ok() != Some(bound.port()) {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_binds_without_a_flag_and_others_need_public() {
        assert_eq!(
            parse("127.0.0.1:0", false).expect("loopback").ip(),
            IpAddr::from([127, 0, 0, 1])
        );
        assert!(parse("[::1]:7420", false).is_ok());
        let refused = parse("0.0.0.0:7420", false).expect_err("needs --public");
        assert!(refused.to_string().contains("--public"), "{refused}");
        assert!(parse("0.0.0.0:7420", true).is_ok());
        let bad = parse("7420", false).expect_err("no host");
        assert!(bad.to_string().contains("HOST:PORT"), "{bad}");
    }

    #[test]
    fn only_loopback_names_with_the_bound_port_are_answered() {
        let bound: SocketAddr = "127.0.0.1:7420".parse().expect("address");
        for host in [
            "127.0.0.1:7420",
            "localhost:7420",
            "LOCALHOST:7420",
            "[::1]:7420",
        ] {
            assert!(host_is_allowed(Some(host), bound, false), "{host}");
        }
        for host in [
            "evil.example:7420",
            "127.0.0.1:80",
            "127.0.0.1",
            "localhost.evil.example:7420",
            "",
        ] {
            assert!(!host_is_allowed(Some(host), bound, false), "{host}");
        }
        assert!(!host_is_allowed(None, bound, false));
        assert!(host_is_allowed(Some("evil.example:7420"), bound, true));
    }
}
