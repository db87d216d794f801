//! The file list of the `@` finder: the working directory walked off the
//! loop with the `ignore` crate (`.gitignore`, `.ignore` and hidden files
//! skipped, as ripgrep does), warden's own protected files left out.

use std::path::Path;

use crate::client::fs::{Access, Protected, Roots};
use crate::model::PromptBlock;

/// A mentioned file larger than this goes as a link, never embedded.
pub(crate) const EMBED_LIMIT: u64 = 256 * 1024;

/// Files listed at most (a huge tree lists its first ones).
pub(crate) const MAX_FILES: usize = 200_000;

/// The files under `cwd`, as paths relative to it, in walk order.
pub fn list_files(cwd: &Path, protected: &Protected) -> Vec<String> {
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(cwd)
        .follow_links(false)
        .require_git(false)
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if protected.check_path(path, Access::Read).is_err() {
            continue;
        }
        if let Ok(relative) = path.strip_prefix(cwd) {
            out.push(relative.to_string_lossy().into_owned());
        }
        if out.len() >= MAX_FILES {
            break;
        }
    }
    out
}

/// The `@path` and `@"path with spaces"` words of a message (a path's
/// trailing punctuation dropped).
pub(crate) fn mentioned(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut at_word_start = true;
    while let Some(c) = rest.chars().next() {
        if c == '@' && at_word_start {
            let after = &rest[1..];
            let (path, used) = if let Some(quoted) = after.strip_prefix('"') {
                match quoted.find('"') {
                    Some(end) => (quoted[..end].to_string(), end + 2),
                    None => (String::new(), 0),
                }
            } else {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                let word = after[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
                (word.to_string(), end)
            };
            if !path.is_empty() && !out.contains(&path) {
                out.push(path);
            }
            rest = &after[used..];
            at_word_start = false;
            continue;
        }
        at_word_start = c.is_whitespace();
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// What the agent takes in a prompt besides text and links (its
/// `promptCapabilities`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Takes {
    /// `embeddedContext`: a small text file goes embedded.
    pub embedded: bool,
    /// `image`: an image file goes as an `image` block.
    pub image: bool,
}

/// Images larger than this go as a link, never inline.
pub(crate) const IMAGE_LIMIT: u64 = 5 * 1024 * 1024;

/// The MIME type of an image file, by its extension.
pub(crate) fn image_mime(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// A `file://` URI for an absolute path (bytes outside the unreserved set
/// percent-encoded).
pub fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The blocks for the files `text` mentions that are files inside the
/// roots and not warden's own protected files (those are left out, never
/// linked or embedded): embedded when `embed` (the agent's
/// `embeddedContext`) and the file is small UTF-8 text, else a link.
pub(crate) fn blocks(cwd: &Path, roots: &Roots, text: &str, takes: Takes) -> Vec<PromptBlock> {
    let mut out = Vec::new();
    for name in mentioned(text) {
        let Ok(real) = std::fs::canonicalize(cwd.join(&name)) else {
            continue;
        };
        if !real.is_file()
            || !roots.contains(&real)
            || roots.protected().check_path(&real, Access::Read).is_err()
        {
            continue;
        }
        let uri = file_uri(&real);
        let size = std::fs::metadata(&real).map_or(u64::MAX, |m| m.len());
        if let Some(mime) = image_mime(&real).filter(|_| takes.image && size <= IMAGE_LIMIT)
            && let Ok(bytes) = std::fs::read(&real)
        {
            out.push(PromptBlock::Image {
                uri,
                mime: mime.to_string(),
                data: crate::text::base64(&bytes),
            });
            continue;
        }
        let small = size <= EMBED_LIMIT;
        let embedded = (takes.embedded && small)
            .then(|| std::fs::read_to_string(&real).ok())
            .flatten();
        out.push(match embedded {
            Some(text) => PromptBlock::Embedded { uri, text },
            None => PromptBlock::Link { uri, name },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_words_starting_with_at() {
        assert_eq!(
            mentioned("see @src/a.rs, and @\"my notes.md\" but not me@x.org or @"),
            ["src/a.rs", "my notes.md"]
        );
        assert_eq!(
            file_uri(Path::new("/w/my notes.md")),
            "file:///w/my%20notes.md"
        );
    }

    #[test]
    fn blocks_link_or_embed_and_never_protected_or_outside() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let cwd = root.join("proj");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(cwd.join("a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(cwd.join("config.toml"), "bypass_permissions = true\n").unwrap();
        std::fs::write(root.join("outside.txt"), "secret").unwrap();
        let roots =
            Roots::new(&cwd, &[]).protecting(Protected::new().settings(&cwd.join("config.toml")));
        let text = "look at @a.rs @config.toml @../outside.txt @missing.rs";
        let uri = file_uri(&cwd.join("a.rs"));
        assert_eq!(
            blocks(&cwd, &roots, text, Takes::default()),
            [PromptBlock::Link {
                uri: uri.clone(),
                name: "a.rs".into()
            }]
        );
        assert_eq!(
            blocks(
                &cwd,
                &roots,
                text,
                Takes {
                    embedded: true,
                    image: false
                }
            ),
            [PromptBlock::Embedded {
                uri,
                text: "fn a() {}\n".into()
            }]
        );
    }

    #[test]
    fn lists_files_respecting_gitignore_and_protection() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "").unwrap();
        std::fs::write(root.join("target/junk"), "").unwrap();
        std::fs::write(root.join(".hidden"), "").unwrap();
        std::fs::write(root.join("config.toml"), "").unwrap();
        let protected = Protected::new().settings(&root.join("config.toml"));
        let mut files = list_files(root, &protected);
        files.sort();
        assert_eq!(files, ["src/main.rs"]);
        let mut all = list_files(root, &Protected::new());
        all.sort();
        assert_eq!(all, ["config.toml", "src/main.rs"]);
    }
}
