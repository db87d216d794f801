//! Escape sequences that reach past the screen: the clipboard (OSC 52), the
//! desktop notification (OSC 9), and tmux's passthrough around them.
//!
//! OSC 52 works over SSH (the terminal at the user's end sets its own
//! clipboard). Inside tmux ($TMUX set), the sequence is wrapped in tmux's
//! passthrough (`ESC P tmux; ... ESC \`, every ESC doubled) so that it
//! reaches the outer terminal (tmux 3.3+ wants `set -g allow-passthrough on`).

use std::io::{self, Write};

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

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
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

/// Put `text` on the clipboard of the terminal warden runs in.
pub(crate) fn copy(text: &str) {
    let mut stdout = io::stdout();
    let _ = stdout.write_all(osc52(text, in_tmux()).as_bytes());
    let _ = stdout.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }

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

    #[test]
    fn osc9_is_one_visible_line() {
        assert_eq!(osc9("done\nnow\x1b", false), "\x1b]9;warden: done␤now␛\x07");
        assert!(osc9("x", true).starts_with("\x1bPtmux;\x1b\x1b]9;"));
    }
}
