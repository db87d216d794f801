//! What the URL says: the address a phone opens. `[remote] public_url`
//! when set (checked here); else the address the server listens on, and
//! when that is every address of the machine (`0.0.0.0`, `::`), one of
//! its own: a Tailscale one (100.64.0.0/10) first, then a private one,
//! then any other that is not loopback (127.0.0.1 when it has none).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why a `public_url` cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PublicUrlError {
    #[error("public_url must start with http:// or https://")]
    Scheme,
    #[error("public_url has no host")]
    NoHost,
    #[error("public_url must be a bare address (no user, query or fragment, no spaces)")]
    NotBare,
}

/// `[remote] public_url` checked: `http(s)://host[:port][/path]`, without
/// its trailing `/` (the page's paths are added to it).
pub fn public_base(text: &str) -> Result<String, PublicUrlError> {
    let text = text.trim();
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .ok_or(PublicUrlError::Scheme)?;
    if text.chars().any(|c| {
        c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '@' | '"' | '<' | '>' | '\\')
    }) {
        return Err(PublicUrlError::NotBare);
    }
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || host.starts_with(':') {
        return Err(PublicUrlError::NoHost);
    }
    Ok(text.trim_end_matches('/').to_string())
}

/// The base URL (no trailing `/`) for a server listening on `addr`.
pub(super) fn listen_base(addr: SocketAddr) -> String {
    let ip = if addr.ip().is_unspecified() {
        pick(&interface_addrs(), addr.ip()).unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
    } else {
        addr.ip()
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

/// The address a phone is likeliest to reach among `all`, for a server on
/// `unspecified` (IPv4 only for `0.0.0.0`; `::` takes both).
fn pick(all: &[IpAddr], unspecified: IpAddr) -> Option<IpAddr> {
    all.iter()
        .copied()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified() && !ip.is_multicast())
        .filter(|ip| unspecified.is_ipv6() || ip.is_ipv4())
        .filter_map(|ip| rank(ip).map(|r| (r, ip)))
        .min_by_key(|(r, _)| *r)
        .map(|(_, ip)| ip)
}

/// Lower is likelier; `None` for an address a URL cannot use alone (IPv6
/// link-local needs its interface).
fn rank(ip: IpAddr) -> Option<u8> {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            Some(if a == 100 && (64..128).contains(&b) {
                0
            } else if v4.is_private() {
                1
            } else if v4.is_link_local() {
                4
            } else {
                2
            })
        }
        IpAddr::V6(v6) if is_link_local_v6(v6) => None,
        // Tailscale's IPv6 range, fd7a:115c:a1e0::/48.
        IpAddr::V6(v6) if v6.segments()[..3] == [0xfd7a, 0x115c, 0xa1e0] => Some(0),
        IpAddr::V6(_) => Some(3),
    }
}

fn is_link_local_v6(v6: Ipv6Addr) -> bool {
    v6.segments()[0] & 0xffc0 == 0xfe80
}

/// The addresses of the machine's interfaces that are up.
#[cfg(unix)]
fn interface_addrs() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list that freeifaddrs frees
    // below; nothing of it is kept past that.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list, not yet freed.
        let ifa = unsafe { &*cur };
        let up = ifa.ifa_flags & (libc::IFF_UP as libc::c_uint) != 0;
        if up && !ifa.ifa_addr.is_null() {
            // SAFETY: a non-null ifa_addr points at a sockaddr whose family
            // says which sockaddr_* it is.
            let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
            if family == libc::AF_INET {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let sin = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in>() };
                out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                    sin.sin_addr.s_addr,
                ))));
            } else if family == libc::AF_INET6 {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in6>() };
                out.push(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
            }
        }
        cur = ifa.ifa_next;
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

#[cfg(not(unix))]
fn interface_addrs() -> Vec<IpAddr> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_tailscale_address_first_then_a_private_one_never_loopback() {
        let v4 = ip("0.0.0.0");
        let all = [
            ip("127.0.0.1"),
            ip("8.8.4.4"),
            ip("192.168.1.20"),
            ip("100.101.102.103"),
            ip("fd7a:115c:a1e0::1"),
        ];
        assert_eq!(pick(&all, v4), Some(ip("100.101.102.103")));
        assert_eq!(pick(&all[..3], v4), Some(ip("192.168.1.20")));
        assert_eq!(pick(&all[..2], v4), Some(ip("8.8.4.4")));
        assert_eq!(pick(&all[..1], v4), None);
        // `::` takes IPv6 too; a link-local one cannot stand alone in a URL.
        assert_eq!(pick(&all[3..], ip("::")), Some(ip("100.101.102.103")));
        assert_eq!(pick(&all[4..], ip("::")), Some(ip("fd7a:115c:a1e0::1")));
        assert_eq!(pick(&[ip("fe80::1")], ip("::")), None);
        assert_eq!(pick(&all[4..], v4), None);
    }

    #[test]
    fn an_address_on_all_interfaces_is_never_the_one_shown() {
        let base = listen_base("0.0.0.0:8765".parse().unwrap());
        assert!(
            base.starts_with("http://") && base.ends_with(":8765"),
            "{base}"
        );
        assert!(!base.contains("0.0.0.0"), "{base}");
        let base = listen_base("127.0.0.1:9".parse().unwrap());
        assert_eq!(base, "http://127.0.0.1:9");
        let base = listen_base("[::1]:9".parse().unwrap());
        assert_eq!(base, "http://[::1]:9");
    }

    #[test]
    fn public_urls_are_bare_http_or_https_addresses() {
        assert_eq!(
            public_base("https://box.tail1234.ts.net/"),
            Ok("https://box.tail1234.ts.net".into())
        );
        assert_eq!(
            public_base("http://100.64.0.7:8765"),
            Ok("http://100.64.0.7:8765".into())
        );
        assert_eq!(
            public_base("https://box.example/warden/"),
            Ok("https://box.example/warden".into())
        );
        assert_eq!(public_base("box.example"), Err(PublicUrlError::Scheme));
        assert_eq!(public_base("ftp://box"), Err(PublicUrlError::Scheme));
        assert_eq!(public_base("https://"), Err(PublicUrlError::NoHost));
        assert_eq!(public_base("https:///x"), Err(PublicUrlError::NoHost));
        for bad in [
            "https://box/?t=1",
            "https://box/#x",
            "https://u@box/",
            "https://box/a b",
            "https://box/\"><script>",
        ] {
            assert_eq!(public_base(bad), Err(PublicUrlError::NotBare), "{bad}");
        }
    }
}
