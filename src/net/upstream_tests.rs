//! Reading the user's proxy variables and `NO_PROXY`, from values given
//! here (never the process's environment).

use super::*;

fn vars(pairs: &[(&str, &str)]) -> Upstreams {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    Upstreams::from_vars(move |name| {
        pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    })
}

#[test]
fn a_proxy_url_is_read_as_curl_reads_it() {
    let up = parse_url("http://us%40er:p%3Ass@Proxy.Corp:3128/").unwrap();
    assert_eq!(up.scheme, Scheme::Http);
    assert_eq!((up.host.as_str(), up.port), ("proxy.corp", 3128));
    assert_eq!(up.auth, Some(("us@er".into(), "p:ss".into())));
    assert_eq!(up.shown(), "http://us@er:***@proxy.corp:3128");
    assert!(!format!("{up:?}").contains("p:ss"));
    // No scheme: http; no port: 1080.
    let up = parse_url("proxy.corp").unwrap();
    assert_eq!((up.scheme, up.port, up.auth), (Scheme::Http, 1080, None));
    assert_eq!(parse_url("socks5h://[::1]:9050").unwrap().host, "::1");
    assert_eq!(
        parse_url("SOCKS5://h:1").unwrap().scheme,
        Scheme::Socks5,
        "the scheme is case-insensitive"
    );
    for bad in [
        "https://proxy.corp:443",
        "socks4://h:1",
        "http://",
        "http://a b:1",
    ] {
        assert!(parse_url(bad).is_err(), "{bad}");
    }
    assert!(parse_url("http://u:%zz@h:1").is_err());
}

#[test]
fn https_for_tunnels_http_for_forwarding_all_as_the_fallback_lower_case_first() {
    let up = vars(&[
        ("HTTPS_PROXY", "http://upper:1"),
        ("https_proxy", "http://lower:2"),
        ("ALL_PROXY", "socks5h://all:3"),
    ]);
    assert_eq!(up.tunnel.as_ref().map(|u| u.host.as_str()), Some("lower"));
    assert_eq!(up.plain.as_ref().map(|u| u.host.as_str()), Some("all"));
    assert!(up.notes.is_empty());
    let target = |kind, port| up.for_target("api.test", port, kind).map(|u| u.port);
    assert_eq!(target(Kind::Tunnel, 443), Some(2));
    assert_eq!(target(Kind::Socks, 443), Some(2));
    assert_eq!(target(Kind::Forward, 80), Some(3));
    assert_eq!(target(Kind::Socks, 80), Some(3));
    // Upper case alone is read; an empty value is unset.
    let up = vars(&[("HTTP_PROXY", "h:8080"), ("https_proxy", " ")]);
    assert_eq!(up.plain.map(|u| u.port), Some(8080));
    assert_eq!(up.tunnel, None);
    // Nothing set: everything direct, nothing said.
    let up = vars(&[]);
    assert_eq!(up, Upstreams::default());
    assert_eq!(up.for_target("api.test", 443, Kind::Tunnel), None);
}

#[test]
fn an_unsupported_scheme_is_said_once_with_its_password_hidden_and_goes_direct() {
    let up = vars(&[
        ("https_proxy", "https://me:secret@proxy.corp:443"),
        ("all_proxy", "http://all:1"),
    ]);
    assert_eq!(up.tunnel, None, "not the fallback: that kind goes direct");
    assert_eq!(up.plain.as_ref().map(|u| u.host.as_str()), Some("all"));
    assert_eq!(up.notes.len(), 1, "{:?}", up.notes);
    assert!(up.notes[0].starts_with("https_proxy=https://me:***@proxy.corp:443 is not used"));
    assert!(!up.notes[0].contains("secret"));
    let report = up.report().join("\n");
    assert!(
        report.contains("plain HTTP through http://all:1"),
        "{report}"
    );
    assert!(
        report.contains("tunnels and HTTPS through none (direct)"),
        "{report}"
    );
    assert!(!report.contains("secret"));
    assert!(
        report.contains("(NO_PROXY and loopback): loopback\n"),
        "{report}"
    );
    let report = vars(&[
        ("https_proxy", "http://u:pw@p:1"),
        ("no_proxy", "a.test, .b.test"),
    ])
    .report()
    .join("\n");
    assert!(report.contains("http://u:***@p:1"), "{report}");
    assert!(
        report.contains("loopback): loopback, a.test, b.test"),
        "{report}"
    );
    assert!(!report.contains("pw"));
}

#[test]
fn no_proxy_matches_hosts_domains_ports_and_addresses() {
    let list = NoProxy::parse(
        "Example.com, .corp.test,*.star.test, internal:8080, 10.0.0.0/8, 192.168.1.7, [fd00::1], fe80::/16",
    );
    let yes = [
        ("example.com", 443),
        ("api.example.com", 443),
        ("corp.test", 1),
        ("a.b.corp.test", 1),
        ("x.star.test", 1),
        ("internal", 8080),
        ("10.1.2.3", 443),
        ("192.168.1.7", 80),
        ("fd00::1", 443),
        ("fe80::5", 22),
        ("example.com.", 443),
    ];
    for (host, port) in yes {
        assert!(list.bypasses(host, port), "{host}:{port}");
    }
    let no = [
        ("notexample.com", 443),
        ("example.com.evil", 443),
        ("internal", 8081),
        ("11.0.0.1", 443),
        ("192.168.1.70", 80),
        ("fd00::2", 443),
    ];
    for (host, port) in no {
        assert!(!list.bypasses(host, port), "{host}:{port}");
    }
    assert!(NoProxy::parse("*").bypasses("anything.test", 1));
    assert!(!NoProxy::parse("").bypasses("anything.test", 1));
    // Through the variables: lower case first, and loopback never proxied.
    let up = vars(&[
        ("all_proxy", "http://p:1"),
        ("NO_PROXY", "upper.test"),
        ("no_proxy", "lower.test"),
    ]);
    assert!(up.for_target("lower.test", 443, Kind::Tunnel).is_none());
    assert!(up.for_target("upper.test", 443, Kind::Tunnel).is_some());
    for host in [
        "localhost",
        "app.localhost",
        "127.0.0.1",
        "127.9.9.9",
        "::1",
    ] {
        assert!(up.for_target(host, 443, Kind::Tunnel).is_none(), "{host}");
    }
}
