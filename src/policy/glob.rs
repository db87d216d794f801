//! The small glob matcher behind rules, and lexical path normalisation.
//!
//! Hand-written rather than `globset` so that every pattern is valid: a rule
//! is plain data from the settings file, and a deny rule whose glob failed to
//! compile would silently stop protecting anything. The syntax is small:
//!
//! - command globs: `*` (or `**`) matches any characters, `/` and spaces
//!   included; `?` matches one character; a trailing ` *` also matches
//!   nothing, so `cargo test *` covers `cargo test` and `cargo test --lib`
//!   but not `cargo testx`;
//! - path globs: `*` matches within one path segment, `**` crosses
//!   directories, `**/` also matches no directory at all, a trailing `/**`
//!   also matches the directory itself; `?` matches one character but `/`;
//! - `\` makes the next character literal; everything else is literal.
//!
//! Matching is a dynamic programme over (pattern token, text position), so it
//! is linear in the text for each token and never backtracks exponentially.

use std::path::Path;

/// One piece of a compiled pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// A literal character.
    Lit(char),
    /// `?` in a command glob: any one character.
    AnyOne,
    /// `?` in a path glob: any one character but `/`.
    SegmentOne,
    /// `*` in a command glob, or a `**` that is not a whole segment in a path glob.
    Any,
    /// `*` in a path glob: any characters but `/`.
    Segment,
    /// `**/` in a path glob: nothing, or any characters ending in `/`.
    DeepDirs,
    /// A trailing `/**` in a path glob: nothing, or `/` and anything after it.
    DirTail,
    /// A trailing ` *` in a command glob: nothing, or whitespace and anything after it.
    WordTail,
}

/// Whether a command glob matches a whole command.
pub(crate) fn command_matches(pattern: &str, command: &str) -> bool {
    run(&command_tokens(pattern), command)
}

/// Whether a path glob matches a whole path (both already normalised).
pub(crate) fn path_matches(pattern: &str, path: &str) -> bool {
    run(&path_tokens(pattern), path)
}

/// Glob matching where `*` matches anything (tool names).
pub(crate) fn name_matches(pattern: &str, name: &str) -> bool {
    command_matches(pattern, name)
}

/// Backslash-escape the characters the glob syntax gives a meaning.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn command_tokens(pattern: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => toks.push(Tok::Lit(chars.next().unwrap_or('\\'))),
            '*' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                if chars.peek().is_none() && toks.last() == Some(&Tok::Lit(' ')) {
                    toks.pop();
                    toks.push(Tok::WordTail);
                } else {
                    toks.push(Tok::Any);
                }
            }
            '?' => toks.push(Tok::AnyOne),
            c => toks.push(Tok::Lit(c)),
        }
    }
    toks
}

fn path_tokens(pattern: &str) -> Vec<Tok> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                toks.push(Tok::Lit(chars.get(i + 1).copied().unwrap_or('\\')));
                i += 2;
            }
            '*' if chars.get(i + 1) == Some(&'*') => {
                let after_slash = i == 0 || chars[i - 1] == '/';
                i += 2;
                while chars.get(i) == Some(&'*') {
                    i += 1;
                }
                if after_slash && chars.get(i) == Some(&'/') {
                    toks.push(Tok::DeepDirs);
                    i += 1;
                } else if after_slash && i == chars.len() && toks.last() == Some(&Tok::Lit('/')) {
                    toks.pop();
                    toks.push(Tok::DirTail);
                } else {
                    toks.push(Tok::Any);
                }
            }
            '*' => {
                toks.push(Tok::Segment);
                i += 1;
            }
            '?' => {
                toks.push(Tok::SegmentOne);
                i += 1;
            }
            c => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    toks
}

/// `next[j]`: the tokens after this one match `text[j..]`; the loop fills
/// `cur[j]` for this token, from the end of the text backwards.
fn run(toks: &[Tok], text: &str) -> bool {
    let s: Vec<char> = text.chars().collect();
    let n = s.len();
    let mut next = vec![false; n + 1];
    next[n] = true;
    let mut cur = vec![false; n + 1];
    for tok in toks.iter().rev() {
        // Some tokens need "a later position matches": kept while j descends.
        let mut later = false;
        for j in (0..=n).rev() {
            let c = s.get(j).copied();
            cur[j] = match *tok {
                Tok::Lit(l) => c == Some(l) && next[j + 1],
                Tok::AnyOne => c.is_some() && next[j + 1],
                Tok::SegmentOne => c.is_some_and(|c| c != '/') && next[j + 1],
                Tok::Any => next[j] || (c.is_some() && cur[j + 1]),
                Tok::Segment => next[j] || (c.is_some_and(|c| c != '/') && cur[j + 1]),
                Tok::DeepDirs => {
                    later = later || (c == Some('/') && next[j + 1]);
                    next[j] || later
                }
                Tok::DirTail | Tok::WordTail => {
                    let sep = match *tok {
                        Tok::DirTail => c == Some('/'),
                        _ => c.is_some_and(char::is_whitespace),
                    };
                    let matched = next[j] || (sep && later);
                    later = later || next[j];
                    matched
                }
            };
        }
        std::mem::swap(&mut cur, &mut next);
    }
    next[0]
}

/// A path made absolute and lexically clean: `file://` dropped, a leading `~`
/// expanded with `home`, a relative path joined to `cwd`, `.` and `..`
/// resolved without touching the filesystem (`..` never climbs above `/`).
pub(crate) fn normalize_path(path: &str, home: Option<&Path>, cwd: &Path) -> String {
    lexical(&expand_path(path, home, cwd))
}

/// A path as sent made absolute, without resolving `.` and `..`: a
/// `file:` URI's path (`file:///p`, `file://localhost/p`, `file:/p`,
/// percent-decoded), `~` and `~/..` in `home`, `~NAME/..` as NAME's home
/// beside `home` (or `home` itself when it is NAME's), else relative to `cwd`.
pub(crate) fn expand_path(path: &str, home: Option<&Path>, cwd: &Path) -> String {
    let path = file_uri_path(path).unwrap_or_else(|| path.to_string());
    let path = expand_home(&path, home);
    if path.starts_with('/') {
        path
    } else {
        format!("{}/{path}", cwd.to_string_lossy())
    }
}

/// The path of a `file:` URI (scheme in any case), percent-decoded.
fn file_uri_path(uri: &str) -> Option<String> {
    let scheme = uri.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let rest = &uri[5..];
    let path = match rest.strip_prefix("//") {
        // `file://HOST/path`: the host says nothing about the local path.
        Some(authority) => &authority[authority.find('/').unwrap_or(authority.len())..],
        None => rest,
    };
    Some(percent_decode(path))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A path glob normalised like a path; a glob that starts with `**` stays
/// relative (it matches at any depth), other relative globs are joined to `cwd`.
pub(crate) fn normalize_pattern(pattern: &str, home: Option<&Path>, cwd: &Path) -> String {
    let pattern = expand_home(pattern, home);
    if pattern.starts_with("**") {
        pattern
    } else if pattern.starts_with('/') {
        lexical(&pattern)
    } else {
        lexical(&format!("{}/{pattern}", cwd.to_string_lossy()))
    }
}

/// `dir` written with `~` for the home directory when it is inside it.
pub(crate) fn tilde(dir: &str, home: Option<&Path>) -> String {
    let Some(home) = home.map(|h| lexical(&h.to_string_lossy())) else {
        return dir.to_string();
    };
    if home == "/" {
        return dir.to_string();
    }
    if dir == home {
        "~".to_string()
    } else if let Some(rest) = dir.strip_prefix(&home).and_then(|r| r.strip_prefix('/')) {
        format!("~/{rest}")
    } else {
        dir.to_string()
    }
}

fn expand_home(path: &str, home: Option<&Path>) -> String {
    let (Some(home), Some(rest)) = (home, path.strip_prefix('~')) else {
        return path.to_string();
    };
    let (name, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let home_text = home.to_string_lossy();
    if name.is_empty() {
        return format!("{home_text}{tail}");
    }
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !valid {
        return path.to_string();
    }
    // `~NAME`: the home directory of NAME, taken to sit beside the user's.
    let own = home
        .file_name()
        .is_some_and(|n| n.to_string_lossy() == name);
    match home.parent() {
        _ if own => format!("{home_text}{tail}"),
        Some(parent) => format!("{}/{name}{tail}", parent.to_string_lossy()),
        None => path.to_string(),
    }
}

fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    #[test]
    fn command_star_crosses_slashes_and_spaces() {
        assert!(command_matches("cargo *", "cargo test --manifest-path a/b"));
        assert!(command_matches("*", "rm -rf /"));
        assert!(command_matches("rm -rf*", "rm -rf /"));
        assert!(!command_matches("cargo *", "cargox"));
        assert!(command_matches("git ?tatus", "git status"));
        assert!(command_matches("a\\*b", "a*b"));
        assert!(!command_matches("a\\*b", "axb"));
    }

    #[test]
    fn trailing_space_star_also_matches_the_bare_command() {
        assert!(command_matches("cargo test *", "cargo test"));
        assert!(command_matches("cargo test *", "cargo test --lib"));
        assert!(command_matches("cargo test *", "cargo test\t--lib"));
        assert!(!command_matches("cargo test *", "cargo testx"));
        assert!(!command_matches("cargo test *", "cargo tes"));
        assert!(command_matches("cargo test*", "cargo testx"));
    }

    #[test]
    fn path_star_stays_in_its_segment() {
        assert!(path_matches("/p/*.rs", "/p/main.rs"));
        assert!(!path_matches("/p/*.rs", "/p/src/main.rs"));
        assert!(path_matches("/p/**/*.rs", "/p/main.rs"));
        assert!(path_matches("/p/**/*.rs", "/p/src/a/main.rs"));
        assert!(path_matches("/p/**", "/p/src/a/main.rs"));
        assert!(path_matches("/p/**", "/p"));
        assert!(!path_matches("/p/**", "/pq/a"));
        assert!(path_matches("**/.env", "/home/u/p/.env"));
        assert!(path_matches("**/.env", ".env"));
        assert!(!path_matches("**/.env", "/home/u/p/.envrc"));
        assert!(path_matches("/p/a?c", "/p/abc"));
        assert!(!path_matches("/p/a?c", "/p/a/c"));
        assert!(path_matches("/p/x**y", "/p/x/z/y"));
    }

    #[test]
    fn normalises_home_cwd_and_dots() {
        let home = Some(Path::new("/home/u"));
        let cwd = Path::new("/home/u/proj");
        let cases = [
            ("/home/u/proj/../.ssh/id_rsa", "/home/u/.ssh/id_rsa"),
            ("~/.ssh/id_rsa", "/home/u/.ssh/id_rsa"),
            ("~", "/home/u"),
            ("src/./main.rs", "/home/u/proj/src/main.rs"),
            ("../../../../etc/passwd", "/etc/passwd"),
            ("file:///tmp//x/", "/tmp/x"),
            ("~user/x", "/home/user/x"),
            ("~u/x", "/home/u/x"),
            ("~a b/x", "/home/u/proj/~a b/x"),
            ("file://localhost/tmp/%2e%2e/etc/x", "/etc/x"),
            ("FILE:/tmp/x", "/tmp/x"),
        ];
        for (path, want) in cases {
            assert_eq!(normalize_path(path, home, cwd), want, "{path}");
        }
        assert_eq!(normalize_pattern("~/.ssh/**", home, cwd), "/home/u/.ssh/**");
        assert_eq!(
            normalize_pattern("src/**", home, cwd),
            "/home/u/proj/src/**"
        );
        assert_eq!(normalize_pattern("**/.env", home, cwd), "**/.env");
        assert_eq!(tilde("/home/u/proj/src", home), "~/proj/src");
        assert_eq!(tilde("/home/u", home), "~");
        assert_eq!(tilde("/home/user2", home), "/home/user2");
    }

    proptest! {
        #[test]
        fn literal_patterns_match_only_themselves(a in "[a-z/ .]{0,12}", b in "[a-z/ .]{0,12}") {
            let pa = escape(&a);
            prop_assert!(command_matches(&pa, &a));
            prop_assert!(path_matches(&pa, &a));
            prop_assert_eq!(command_matches(&pa, &b), a == b);
        }

        #[test]
        fn star_matches_everything(text in "\\PC{0,40}") {
            prop_assert!(command_matches("*", &text));
            prop_assert!(path_matches("**", &text));
        }

        #[test]
        fn normalised_paths_are_fixed_points(path in "[a-z~./]{0,20}") {
            let home = Some(Path::new("/h"));
            let once = normalize_path(&path, home, Path::new("/c"));
            prop_assert!(once.starts_with('/'));
            prop_assert_eq!(normalize_path(&once, home, Path::new("/other")), once.clone());
        }
    }
}
