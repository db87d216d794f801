//! Where tables go in the settings document: a removed table's section
//! comment kept for what follows it, and a new table placed after the
//! last one of its kind (`toml_edit` positions).

use toml_edit::{DocumentMut, Item, Table};

/// A removed table takes the comment lines right above its header with it;
/// comment lines above those, after a blank line, are a section comment and
/// move to whatever follows it.
pub(super) fn keep_section_comment(doc: &mut DocumentMut, removed: &Table) {
    let Some(prefix) = removed.decor().prefix().and_then(|p| p.as_str()) else {
        return;
    };
    let Some(section) = section_part(prefix) else {
        return;
    };
    let next = removed
        .position()
        .and_then(|pos| next_position(doc.as_table(), pos));
    match next.and_then(|pos| table_at_mut(doc.as_table_mut(), pos)) {
        Some(table) => {
            let old = table
                .decor()
                .prefix()
                .and_then(|p| p.as_str())
                .unwrap_or("\n")
                .to_string();
            table.decor_mut().set_prefix(format!("{section}{old}"));
        }
        None => {
            let old = doc.trailing().as_str().unwrap_or_default().to_string();
            doc.set_trailing(format!("{section}{old}"));
        }
    }
}

/// The part of a table's leading decor that is not its own comment: the
/// lines before the comment block right above the header, without the blank
/// lines that separated them from it. `None` when that holds no comment.
pub(super) fn section_part(prefix: &str) -> Option<String> {
    let whole_lines = &prefix[..prefix.rfind('\n').map_or(0, |i| i + 1)];
    let lines: Vec<&str> = whole_lines.split_inclusive('\n').collect();
    let mut end = lines.len();
    while end > 0 && !lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    while end > 0 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let section = lines[..end].concat();
    section
        .lines()
        .any(|line| line.trim_start().starts_with('#'))
        .then_some(section)
}

/// Whether a table prints a header of its own.
pub(super) fn has_header(table: &Table) -> bool {
    if table.is_dotted() {
        return false;
    }
    !(table.is_implicit() && table.get_values().is_empty())
}

/// Every table below `table`, depth first.
pub(super) fn for_each_table(table: &Table, f: &mut dyn FnMut(&Table)) {
    for (_, item) in table.iter() {
        match item {
            Item::Table(t) => {
                f(t);
                for_each_table(t, f);
            }
            Item::ArrayOfTables(tables) => {
                for t in tables.iter() {
                    f(t);
                    for_each_table(t, f);
                }
            }
            _ => {}
        }
    }
}

/// The position of the first table with a header after `pos`.
pub(super) fn next_position(root: &Table, pos: isize) -> Option<isize> {
    let mut next: Option<isize> = None;
    for_each_table(root, &mut |t| {
        if let Some(p) = t.position().filter(|&p| p > pos && has_header(t)) {
            next = Some(next.map_or(p, |n| n.min(p)));
        }
    });
    next
}

pub(super) fn table_at_mut(table: &mut Table, pos: isize) -> Option<&mut Table> {
    for (_, item) in table.iter_mut() {
        let tables: Vec<&mut Table> = match item {
            Item::Table(t) => vec![t],
            Item::ArrayOfTables(tables) => tables.iter_mut().collect(),
            _ => continue,
        };
        for t in tables {
            if t.position() == Some(pos) && has_header(t) {
                return Some(t);
            }
            if let Some(found) = table_at_mut(t, pos) {
                return Some(found);
            }
        }
    }
    None
}

/// Put a new table after everything else in the file, including comments
/// at the end (a file that is all comments, like the template, keeps them
/// above the new table).
pub(super) fn place_at_end(doc: &mut DocumentMut, table: &mut Table) {
    let mut last = 0;
    for_each_table(doc.as_table(), &mut |t| {
        last = last.max(t.position().unwrap_or(0));
    });
    table.set_position(Some(last + 1));
    let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
    if trailing.trim().is_empty() {
        return;
    }
    let mut prefix = trailing;
    if !prefix.ends_with('\n') {
        prefix.push('\n');
    }
    prefix.push('\n');
    table.decor_mut().set_prefix(prefix);
    doc.set_trailing("");
}
