//! The remote URL as a QR code in the terminal: two modules a character
//! (Unicode half blocks), drawn light on the terminal's dark background
//! the way `qrencode -t UTF8` does (phone cameras read it either way).

use qrcode::render::unicode::Dense1x2;
use qrcode::{EcLevel, QrCode};

/// The rows of the QR code of `text`, quiet zone included; `None` when
/// the text is too long for a QR code.
pub fn lines(text: &str) -> Option<Vec<String>> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::L).ok()?;
    let drawn = code
        .render::<Dense1x2>()
        // Light modules drawn, dark ones left blank: light on dark.
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build();
    Some(drawn.lines().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use qrcode::Color;

    /// The modules the rows show, read back: `true` for a dark module
    /// (a blank half).
    fn modules_of(rows: &[String]) -> Vec<Vec<bool>> {
        let mut out = Vec::new();
        for row in rows {
            let (mut top, mut bottom) = (Vec::new(), Vec::new());
            for c in row.chars() {
                let (t, b) = match c {
                    '█' => (false, false),
                    '▀' => (false, true),
                    '▄' => (true, false),
                    ' ' => (true, true),
                    other => panic!("not a half block: {other:?}"),
                };
                top.push(t);
                bottom.push(b);
            }
            out.push(top);
            out.push(bottom);
        }
        out
    }

    #[test]
    fn the_rows_are_the_urls_code_module_for_module() {
        let url = "http://127.0.0.1:8765/?t=0123456789abcdef0123456789abcdef";
        let rows = lines(url).expect("a code");
        let code = QrCode::with_error_correction_level(url.as_bytes(), EcLevel::L).unwrap();
        let width = code.width();
        assert!(
            width >= 21 && (width - 17).is_multiple_of(4),
            "a QR code's width: {width}"
        );
        // 4 modules of quiet zone on each side, two modules a row.
        let side = width + 8;
        assert!(rows.iter().all(|r| r.chars().count() == side), "{rows:?}");
        assert_eq!(rows.len(), side.div_ceil(2));
        let seen = modules_of(&rows);
        let colors = code.to_colors();
        for y in 0..side {
            for x in 0..side {
                let inside = (4..width + 4).contains(&x) && (4..width + 4).contains(&y);
                let dark = inside && colors[(y - 4) * width + (x - 4)] == Color::Dark;
                assert_eq!(seen[y][x], dark, "module ({x}, {y})");
            }
        }
        // Another URL, another code.
        let other = lines("http://127.0.0.1:8765/?t=ffffffffffffffffffffffffffffffff").unwrap();
        assert_ne!(rows, other);
    }

    #[test]
    fn text_too_long_for_a_code_gives_none() {
        assert!(lines(&"x".repeat(8000)).is_none());
    }
}
