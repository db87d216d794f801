//! Escape sequences that reach past the screen: the clipboard (OSC 52), the
//! desktop notification (OSC 9), and tmux's passthrough around them.
//!
//! OSC 52 works over SSH (the terminal at the user's end sets its own
//! clipboard). Inside tmux ($TMUX set), the notification is wrapped in
//! tmux's passthrough (`ESC P tmux; ... ESC \`, every ESC doubled) so that it
//! reaches the outer terminal (tmux 3.3+ wants `set -g allow-passthrough on`).
//!
//! The clipboard inside tmux does not go through OSC 52: tmux passes it on
//! only when configured to, and warden could not tell. The text goes into
//! tmux's paste buffer (`tmux load-buffer -w -`, which tmux also sends to
//! the clipboard when `set-clipboard` is on; `tmux set-buffer` on a tmux
//! older than 3.2), and the notice says what happened and what to set: a
//! copy that did not happen is never reported as one.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::process::{Command, Stdio};

use crate::text::base64;

/// Most bytes of text OSC 52 carries; terminals cap it (xterm: 100,000
/// base64 bytes), so longer text is cut at a char boundary.
const MAX_COPY: usize = 74_000;

/// Whether warden runs inside tmux.
pub(crate) fn in_tmux() -> bool {
    std::env::var_os("TMUX").is_some_and(|v| !v.is_empty())
}

/// `seq` wrapped for tmux's passthrough when `tmux`, else as is.
pub(crate) fn wrap(seq: &str, tmux: bool) -> String {
    if !tmux {
        return seq.to_string();
    }
    format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
}

/// The OSC 52 sequence that sets the clipboard to `text`. The text is made
/// visible first (newlines stay; tabs become spaces), so nothing raw from
/// the agent lands in the user's clipboard to be pasted into a shell.
pub(crate) fn osc52(text: &str, tmux: bool) -> String {
    let clean = crate::sanitize::visible(text);
    let cut = crate::text::floor_char_boundary(&clean, MAX_COPY);
    wrap(
        &format!("\x1b]52;c;{}\x07", base64(&clean.as_bytes()[..cut])),
        tmux,
    )
}

/// The OSC 9 desktop notification for `text` (one visible line, cut).
pub(crate) fn osc9(text: &str, tmux: bool) -> String {
    let clean: String = crate::sanitize::one_line(text).chars().take(200).collect();
    wrap(&format!("\x1b]9;warden: {clean}\x07"), tmux)
}

/// What to set in tmux so that a copy reaches the system clipboard.
const TMUX_HINT: &str = "for the system clipboard, add `set -g set-clipboard on` to ~/.tmux.conf";

/// "3 lines" of `text`.
fn lines_of(text: &str) -> String {
    let n = text.lines().count().max(1);
    format!("{n} line{}", if n == 1 { "" } else { "s" })
}

/// Send `text` to the terminal's clipboard with OSC 52 (outside tmux): the
/// notice to show. Whether the terminal honours it, warden cannot know.
pub(crate) fn copy_osc52(text: &str) -> String {
    let mut stdout = io::stdout();
    let sent = stdout
        .write_all(osc52(text, false).as_bytes())
        .and_then(|()| stdout.flush());
    match sent {
        Ok(()) => format!(
            "sent {} to the terminal's clipboard (OSC 52)",
            lines_of(text)
        ),
        Err(err) => format!("nothing copied: the terminal could not be written: {err}"),
    }
}

/// Run `tmux ARGS` with `input` on its stdin: its stderr's first line when
/// it fails.
fn run_tmux(tmux: &OsStr, args: &[&str], input: &[u8]) -> Result<String, String> {
    let mut child = Command::new(tmux)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot run tmux: {err}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A tmux that exits without reading fails below with its own words.
        let _ = stdin.write_all(input);
    }
    let out = child
        .wait_with_output()
        .map_err(|err| format!("tmux did not finish: {err}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = crate::sanitize::one_line(why.lines().next().unwrap_or("failed"));
        Err(format!("tmux {}: {why}", args.first().unwrap_or(&"")))
    }
}

/// Inside tmux: put `text` (sanitized, as OSC 52 would carry it) into
/// tmux's paste buffer with the `tmux` program `tmux`, and into the
/// clipboard where tmux is set to pass it on. The notice to show.
pub(crate) fn copy_tmux(tmux: &OsStr, text: &str) -> String {
    let clean = crate::sanitize::visible(text);
    let lines = lines_of(&clean);
    let with_w = run_tmux(tmux, &["load-buffer", "-w", "-"], clean.as_bytes());
    if with_w.is_err() {
        // tmux before 3.2 has no `-w`: the paste buffer only.
        let set = run_tmux(tmux, &["set-buffer", "--", &clean], b"");
        return match set {
            Ok(_) => {
                format!("copied {lines} into tmux's paste buffer (prefix ] pastes); {TMUX_HINT}")
            }
            Err(why) => format!("nothing copied: {why}"),
        };
    }
    let setting = run_tmux(tmux, &["show-options", "-gv", "set-clipboard"], b"");
    match setting.as_deref() {
        Ok("on" | "external") => {
            format!("copied {lines} into tmux's paste buffer; tmux sends it to the clipboard")
        }
        _ => format!("copied {lines} into tmux's paste buffer (prefix ] pastes); {TMUX_HINT}"),
    }
}

/// Put `text` on the clipboard of the terminal warden runs in (through
/// tmux inside tmux): the notice that says what happened.
pub(crate) fn copy(text: &str) -> String {
    if in_tmux() {
        // Never a `tmux` the agent planted on PATH (`crate::own_path`).
        match crate::own_path::find("tmux") {
            Ok((tmux, _)) => copy_tmux(tmux.as_os_str(), text),
            Err(why) => format!("nothing copied: {why}"),
        }
    } else {
        copy_osc52(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_carries_sanitized_text_and_wraps_for_tmux() {
        let seq = osc52("ls\n\x1b]0;pwned\x07\tx", false);
        assert_eq!(
            seq,
            format!("\x1b]52;c;{}\x07", base64("ls\n␛]0;pwned␇    x".as_bytes()))
        );
        let tmux = osc52("hi", true);
        assert_eq!(tmux, "\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\");
    }

    /// A fake `tmux` in `dir`: `script` is its body; it records its
    /// arguments in `args` and its stdin in `buffer`.
    #[cfg(unix)]
    fn fake_tmux(dir: &std::path::Path, script: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("tmux");
        let body = format!(
            "#!/bin/sh\necho \"$@\" >> '{}/args'\n{script}\n",
            dir.display()
        );
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[cfg(unix)]
    #[test]
    fn inside_tmux_the_text_goes_into_tmuxs_buffer_and_the_notice_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let buffer = dir.path().join("buffer");
        let tmux = fake_tmux(
            dir.path(),
            &format!(
                "case \"$1\" in load-buffer) cat > '{}';; show-options) echo on;; esac",
                buffer.display()
            ),
        );
        let notice = copy_tmux(tmux.as_os_str(), "ls\n\x1b]0;pwned\x07x");
        assert_eq!(
            notice,
            "copied 2 lines into tmux's paste buffer; tmux sends it to the clipboard"
        );
        assert_eq!(std::fs::read_to_string(&buffer).unwrap(), "ls\n␛]0;pwned␇x");
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        assert!(args.starts_with("load-buffer -w -\n"), "{args}");

        // set-clipboard off: the buffer holds it, and the notice says what to set.
        let off = fake_tmux(
            dir.path(),
            "case \"$1\" in load-buffer) cat > /dev/null;; show-options) echo off;; esac",
        );
        let notice = copy_tmux(off.as_os_str(), "hi");
        assert!(
            notice.starts_with("copied 1 line into tmux's paste buffer"),
            "{notice}"
        );
        assert!(notice.contains("set -g set-clipboard on"), "{notice}");
        assert!(!notice.contains("OSC 52"), "{notice}");
    }

    #[cfg(unix)]
    #[test]
    fn an_old_tmux_gets_set_buffer_and_a_failing_one_no_claim_of_a_copy() {
        let dir = tempfile::tempdir().unwrap();
        // tmux 3.1: no -w.
        let old = fake_tmux(
            dir.path(),
            "case \"$2\" in -w) echo 'usage: load-buffer [-b buffer-name] path' >&2; exit 1;; esac",
        );
        let notice = copy_tmux(old.as_os_str(), "a\nb");
        assert!(
            notice.starts_with("copied 2 lines into tmux's paste buffer"),
            "{notice}"
        );
        assert!(notice.contains("set -g set-clipboard on"), "{notice}");
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        assert!(args.contains("set-buffer -- a\nb"), "{args}");

        let broken = fake_tmux(dir.path(), "echo 'no server running' >&2; exit 1");
        let notice = copy_tmux(broken.as_os_str(), "hi");
        assert_eq!(notice, "nothing copied: tmux set-buffer: no server running");
        let missing = dir.path().join("no-tmux-here");
        let notice = copy_tmux(missing.as_os_str(), "hi");
        assert!(
            notice.starts_with("nothing copied: cannot run tmux"),
            "{notice}"
        );
    }

    #[test]
    fn osc9_is_one_visible_line() {
        assert_eq!(osc9("done\nnow\x1b", false), "\x1b]9;warden: done␤now␛\x07");
        assert!(osc9("x", true).starts_with("\x1bPtmux;\x1b\x1b]9;"));
    }
}
