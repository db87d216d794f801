//! The user's own proxy, which warden's proxy goes out through: read once
//! from warden's own environment (never the agent's, which points at
//! warden's proxy), as curl reads it.
//!
//! - `https_proxy` / `HTTPS_PROXY`: a tunnel (`CONNECT`, and SOCKS to any
//!   port but 80); `http_proxy` / `HTTP_PROXY`: plain HTTP forwarding (and
//!   SOCKS to port 80); `all_proxy` / `ALL_PROXY` for either when its own
//!   is unset. The lower-case name wins when both are set; an empty value
//!   is unset.
//! - A URL without a scheme is `http://`; without a port, port 1080 (as
//!   curl). `http://`, `socks5://` (names resolved here) and `socks5h://`
//!   (names resolved by the proxy) are used; any other scheme (`https://`,
//!   `socks4://`, ...) is said once at start and that kind of connection
//!   goes direct.
//! - `no_proxy` / `NO_PROXY`: a comma list of `*` (nothing is proxied),
//!   hosts (`example.com` and `.example.com` both match it and its
//!   subdomains), `host:port`, IP literals and CIDR ranges. Loopback
//!   (`localhost`, `*.localhost`, `127.0.0.0/8`, `::1`) is never proxied.
//!
//! Which host is asked about is decided on the target host before any of
//! this: the upstream is only how an allowed connection is dialled.

use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

use super::proxy::split_authority;

/// The kinds of upstream proxy warden speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// `http://`: `CONNECT` for a tunnel, an absolute-URI request to forward.
    Http,
    /// `socks5://`: the name resolved here, the address sent.
    Socks5,
    /// `socks5h://`: the name sent, resolved by the proxy.
    Socks5h,
}

impl Scheme {
    fn word(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Socks5 => "socks5",
            Scheme::Socks5h => "socks5h",
        }
    }
}

/// One upstream proxy. Its `Debug` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Upstream {
    pub scheme: Scheme,
    /// Lower case, without brackets.
    pub host: String,
    pub port: u16,
    /// The user name and password (percent-decoded), when the URL has them.
    pub auth: Option<(String, String)>,
}

impl Upstream {
    /// The URL as shown to the user: the password hidden.
    pub fn shown(&self) -> String {
        let user = match &self.auth {
            Some((user, pass)) if pass.is_empty() => format!("{user}@"),
            Some((user, _)) => format!("{user}:***@"),
            None => String::new(),
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let shown = format!("{}://{user}{host}:{}", self.scheme.word(), self.port);
        shown.chars().filter(|c| !c.is_control()).collect()
    }
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

/// A proxy URL: the upstream, or why it is not used.
pub fn parse_url(text: &str) -> Result<Upstream, String> {
    let text = text.trim();
    let (scheme, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_string(), text),
    };
    let scheme = match scheme.as_str() {
        "http" => Scheme::Http,
        "socks5" => Scheme::Socks5,
        "socks5h" => Scheme::Socks5h,
        other => return Err(format!("{other}:// proxies are not supported")),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (auth, hostport) = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => {
            let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            (
                Some((percent_decode(user)?, percent_decode(pass)?)),
                hostport,
            )
        }
        None => (None, authority),
    };
    let (host, port) =
        split_authority(hostport, Some(1080)).ok_or_else(|| "no host:port in it".to_string())?;
    Ok(Upstream {
        scheme,
        host,
        port,
        auth,
    })
}

/// `%XX` decoded; anything else as it is.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = bytes
                .get(at + 1..at + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| "a malformed %-escape in its user or password".to_string())?;
            out.push(hex);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "its user or password is not UTF-8".to_string())
}

/// A URL with its password hidden, for a note about a URL not used.
fn hide_password(text: &str) -> String {
    let (scheme, rest) = text.split_once("://").unwrap_or(("", text));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_string(),
    };
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    format!("{scheme}{authority}{tail}")
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

/// One entry of `NO_PROXY`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bypass {
    /// A host name or IP literal (lower case, no brackets, no leading
    /// dot), and the port it is limited to.
    Host(String, Option<u16>),
    /// An IP range.
    Cidr(IpAddr, u8),
}

/// `NO_PROXY`: the hosts connected to directly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoProxy {
    /// `*`: nothing is proxied.
    all: bool,
    entries: Vec<Bypass>,
    /// The list as given (for the report), its blanks dropped.
    shown: Vec<String>,
}

impl NoProxy {
    /// Read a `NO_PROXY` value.
    pub fn parse(text: &str) -> NoProxy {
        let mut out = NoProxy::default();
        for entry in text.split([',', ' ', '\t']).map(str::trim) {
            let entry = entry.to_ascii_lowercase();
            let entry = entry.trim_start_matches("*.").trim_start_matches('.');
            let entry = entry.trim_end_matches('.');
            if entry.is_empty() {
                continue;
            }
            out.shown.push(
                entry
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(100)
                    .collect(),
            );
            if entry == "*" {
                out.all = true;
                continue;
            }
            if let Some((ip, bits)) = entry.split_once('/') {
                let ip = ip.trim_start_matches('[').trim_end_matches(']');
                if let (Ok(ip), Ok(bits)) = (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
                    let max = if ip.is_ipv4() { 32 } else { 128 };
                    if bits <= max {
                        out.entries.push(Bypass::Cidr(ip, bits));
                    }
                }
                continue;
            }
            if entry.parse::<IpAddr>().is_ok() {
                out.entries.push(Bypass::Host(entry.to_string(), None));
            } else if let Some((host, port)) = split_authority(entry, None) {
                out.entries.push(Bypass::Host(host, Some(port)));
            } else {
                let host = entry.trim_start_matches('[').trim_end_matches(']');
                out.entries.push(Bypass::Host(host.to_string(), None));
            }
        }
        out
    }

    /// Whether `host:port` (lower case, no brackets) is connected to
    /// directly.
    pub fn bypasses(&self, host: &str, port: u16) -> bool {
        if self.all {
            return true;
        }
        let host = host.trim_end_matches('.');
        let ip = host.parse::<IpAddr>().ok();
        self.entries.iter().any(|entry| match entry {
            Bypass::Host(name, limit) => {
                limit.is_none_or(|p| p == port)
                    && (host == name
                        || (ip.is_none()
                            && host
                                .strip_suffix(name.as_str())
                                .is_some_and(|head| head.ends_with('.'))))
            }
            Bypass::Cidr(net, bits) => ip.is_some_and(|ip| in_range(ip, *net, *bits)),
        })
    }
}

fn in_range(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// Whether `host` is this machine's loopback (never proxied).
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| match ip {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
        })
}

/// How the agent asked for a connection, which picks the variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `CONNECT host:port`.
    Tunnel,
    /// An absolute-URI `http://` request.
    Forward,
    /// SOCKS5 `CONNECT`.
    Socks,
}

/// The upstream proxies warden's proxy goes out through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Upstreams {
    /// For a tunnel (`https_proxy`, else `all_proxy`).
    pub tunnel: Option<Upstream>,
    /// For plain HTTP (`http_proxy`, else `all_proxy`).
    pub plain: Option<Upstream>,
    pub no_proxy: NoProxy,
    /// What start-up says: the variables set but not used, and why.
    pub notes: Vec<String>,
}

impl Upstreams {
    /// From variables looked up by `get` (warden's environment, or a test's).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Upstreams {
        let value = |lower: &str| {
            let upper = lower.to_ascii_uppercase();
            [lower, upper.as_str()]
                .into_iter()
                .find_map(|name| {
                    get(name)
                        .filter(|v| !v.trim().is_empty())
                        .map(|v| (name, v))
                })
                .map(|(name, v)| (name.to_string(), v))
        };
        let mut notes = Vec::new();
        let mut read = |lower: &str| -> Option<Option<Upstream>> {
            let (name, text) = value(lower)?;
            Some(match parse_url(&text) {
                Ok(upstream) => Some(upstream),
                Err(why) => {
                    notes.push(format!(
                        "{name}={} is not used ({why}): those connections go direct",
                        hide_password(text.trim())
                    ));
                    None
                }
            })
        };
        let all = read("all_proxy");
        let https = read("https_proxy");
        let http = read("http_proxy");
        let all = all.flatten();
        Upstreams {
            tunnel: https.unwrap_or_else(|| all.clone()),
            plain: http.unwrap_or(all),
            no_proxy: value("no_proxy")
                .map(|(_, v)| NoProxy::parse(&v))
                .unwrap_or_default(),
            notes,
        }
    }

    /// The upstream an allowed connection to `host:port` goes through,
    /// none to go direct.
    pub fn for_target(&self, host: &str, port: u16, kind: Kind) -> Option<&Upstream> {
        if is_loopback(host) || self.no_proxy.bypasses(host, port) {
            return None;
        }
        match kind {
            Kind::Forward => self.plain.as_ref(),
            Kind::Socks if port == 80 => self.plain.as_ref(),
            Kind::Tunnel | Kind::Socks => self.tunnel.as_ref(),
        }
    }

    /// What `warden sandbox` says of them (passwords hidden).
    pub fn report(&self) -> Vec<String> {
        let shown =
            |u: &Option<Upstream>| u.as_ref().map_or("none (direct)".into(), Upstream::shown);
        if self.tunnel.is_none() && self.plain.is_none() {
            let mut out = vec!["upstream proxy: none: allowed connections go direct".to_string()];
            out.extend(self.notes.iter().map(|n| format!("upstream proxy: {n}")));
            return out;
        }
        let mut out = vec![
            format!(
                "upstream proxy (from warden's environment): tunnels and HTTPS through {}; plain HTTP through {}",
                shown(&self.tunnel),
                shown(&self.plain)
            ),
            format!(
                "upstream proxy bypassed (NO_PROXY and loopback): {}",
                if self.no_proxy.all {
                    "every host (NO_PROXY=*)".to_string()
                } else {
                    ["loopback".to_string()]
                        .into_iter()
                        .chain(self.no_proxy.shown.iter().cloned())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        ];
        out.extend(self.notes.iter().map(|n| format!("upstream proxy: {n}")));
        out
    }
}

/// warden's own upstreams, read from its environment the first time they
/// are asked for (at start: the start notes ask).
pub fn own() -> Arc<Upstreams> {
    static OWN: OnceLock<Arc<Upstreams>> = OnceLock::new();
    OWN.get_or_init(|| Arc::new(Upstreams::from_vars(|name| std::env::var(name).ok())))
        .clone()
}

/// What start-up says about the user's proxy variables, when an agent
/// of `profile` goes out through warden's proxy (confined, the network
/// not open).
pub fn start_notes(profile: Option<&crate::sandbox::Profile>) -> Vec<String> {
    match profile {
        Some(p)
            if p.mode != crate::sandbox::SandboxMode::Off
                && p.network != super::NetworkMode::Open =>
        {
            own().notes.clone()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "upstream_tests.rs"]
mod tests;
