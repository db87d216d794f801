//! The remote URL over everything (`warden --remote`, `/remote`): its QR
//! code for a phone's camera and the URL as text; any key closes it. The
//! URL carries a one-time token, so it is shown here and never written
//! into a transcript.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use super::theme::Theme;
use super::wrap::str_width;
use crate::state::RemoteCode;

/// The box's last row.
const CLOSE_HINT: &str = "any key closes this · /remote makes a new URL";

/// Draw the box in the middle of `area`.
pub(crate) fn render(buf: &mut Buffer, area: Rect, code: &RemoteCode, theme: Theme) {
    let url_w = str_width(&code.url);
    let qr_w = code.qr.first().map_or(0, |r| str_width(r));
    let inner_w = usize::from(area.width.saturating_sub(2));
    let inner_h = usize::from(area.height.saturating_sub(2));
    // The URL on as many rows as it needs, cut into the box's width.
    let url_rows: Vec<String> = match inner_w {
        0 => Vec::new(),
        w => code
            .url
            .chars()
            .collect::<Vec<_>>()
            .chunks(w.min(url_w.max(1)))
            .map(|c| c.iter().collect())
            .collect(),
    };
    // The QR code only when it fits whole: a cut one scans as nothing.
    let qr_fits = qr_w <= inner_w && code.qr.len() + url_rows.len() + 2 <= inner_h;
    let mut rows: Vec<(String, Style)> = Vec::new();
    if qr_fits {
        let qr_style = if theme.fg(Color::White) == Style::new() {
            Style::new()
        } else {
            Style::new().fg(Color::White).bg(Color::Black)
        };
        rows.extend(code.qr.iter().map(|r| (r.clone(), qr_style)));
    } else {
        rows.push(("(a larger terminal shows the QR code)".into(), theme.dim()));
    }
    rows.extend(url_rows.into_iter().map(|r| (r, theme.bold())));
    rows.push((String::new(), theme.plain()));
    rows.push((CLOSE_HINT.into(), theme.dim()));
    let want_w = rows.iter().map(|(r, _)| str_width(r)).max().unwrap_or(0);
    let w = (want_w + 2).min(usize::from(area.width));
    let h = (rows.len() + 2).min(usize::from(area.height));
    let (w, h) = (
        u16::try_from(w).unwrap_or(area.width),
        u16::try_from(h).unwrap_or(area.height),
    );
    let boxed = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(boxed, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border())
        .title(" open on your phone ");
    let inner = block.inner(boxed);
    block.render(boxed, buf);
    for (i, (row, style)) in rows.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= inner.height {
            break;
        }
        buf.set_stringn(inner.x, inner.y + dy, row, usize::from(inner.width), *style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::tests::buffer_text;

    fn code() -> RemoteCode {
        let url = "http://127.0.0.1:8765/?t=0123456789abcdef0123456789abcdef".to_string();
        let qr = crate::remote::qr::lines(&url).unwrap();
        RemoteCode { url, qr }
    }

    #[test]
    fn the_url_and_its_whole_qr_code_in_a_box() {
        let area = Rect::new(0, 0, 80, 30);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &code(), Theme::with_color(false));
        insta::assert_snapshot!(buffer_text(&buf));
    }

    #[test]
    fn too_small_for_the_code_shows_the_url_alone() {
        let area = Rect::new(0, 0, 40, 12);
        let mut buf = Buffer::empty(area);
        render(&mut buf, area, &code(), Theme::with_color(false));
        let text = buffer_text(&buf);
        assert!(!text.contains('▀'), "{text}");
        assert!(
            text.contains("a larger terminal shows the QR code"),
            "{text}"
        );
        // The whole URL, cut into the box's rows.
        let joined: String = text
            .lines()
            .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
            .collect();
        assert!(joined.contains(&code().url), "{text}");
    }
}
