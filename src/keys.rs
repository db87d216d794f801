//! Every key of warden, once: for each context (the composer, the cards,
//! the chat list, ...) a table of bindings, each one key (or several),
//! a short label, a longer help text and what it does. The walk of a key
//! press is here too, after the door (`tui::keymap`): `press.rs` reads the
//! composer and chat tables for the view's own keys and Ctrl-C
//! ([`press()`]), `route.rs` says who has the key, and that context reads
//! its own table to decide what the key means there; the card's hint line, the footer's hints, the help overlay
//! (F1, or `?` on an empty message) and the guide's key tables (docs/GUIDE.md) are all
//! rendered from the same tables, so they cannot drift apart. (The shape
//! follows codex-rs/tui's `ApprovalOption`: a label, a decision and its
//! shortcuts in one value.)
//!
//! Adding a key is one entry in one table (and, for a new context, one
//! arm in [`Context::rows`]).

mod action;
mod press;
mod route;
mod tables;

pub use action::{Action, Scroll};
pub use press::{Press, press};
pub(crate) use tables::*;

use crate::state::{Choice, ChoiceDef, choice_bindings};

/// A key without modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// A character key (shown upper case with Ctrl or Alt).
    Char(char),
    /// Any of the digits 1 to 9 (the binding's command gets the digit).
    Digits,
    Enter,
    Esc,
    Tab,
    /// Shift+Tab.
    BackTab,
    Backspace,
    Delete,
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    PageUp,
    PageDown,
    /// A function key.
    F(u8),
    /// A mouse click on the thing (shown only; never pressed).
    Click,
}

/// A key with its modifiers, as warden names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: Code,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Key {
    /// The key alone.
    pub const fn plain(code: Code) -> Key {
        Key {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    /// A character key alone.
    pub const fn ch(c: char) -> Key {
        Key::plain(Code::Char(c))
    }

    /// Ctrl and the key.
    pub const fn ctrl(code: Code) -> Key {
        Key {
            ctrl: true,
            ..Key::plain(code)
        }
    }

    /// Alt and the key.
    pub const fn alt(code: Code) -> Key {
        Key {
            alt: true,
            ..Key::plain(code)
        }
    }

    /// Shift and the key.
    pub const fn shift(code: Code) -> Key {
        Key {
            shift: true,
            ..Key::plain(code)
        }
    }

    /// Whether pressing `pressed` is this key (a [`Code::Digits`] key is
    /// any digit from 1 to 9).
    pub(crate) fn matches(&self, pressed: Key) -> bool {
        let code = match (self.code, pressed.code) {
            (Code::Digits, Code::Char('1'..='9')) => true,
            (a, b) => a == b,
        };
        code && self.ctrl == pressed.ctrl && self.alt == pressed.alt && self.shift == pressed.shift
    }

    /// The key's name: `Ctrl+T` with `sep` '+', `Ctrl-T` with '-'.
    pub(crate) fn name(&self, sep: char) -> String {
        let mut out = String::new();
        for (on, name) in [
            (self.ctrl, "Ctrl"),
            (self.alt, "Alt"),
            (self.shift, "Shift"),
        ] {
            if on {
                out.push_str(name);
                out.push(sep);
            }
        }
        let modified = self.ctrl || self.alt;
        match self.code {
            Code::Char(c) if modified => out.extend(c.to_uppercase()),
            Code::Char(c) => out.push(c),
            Code::Digits if modified => out.push_str("1..9"),
            Code::Digits => out.push_str("1-9"),
            Code::BackTab => {
                out.push_str("Shift");
                out.push(sep);
                out.push_str("Tab");
            }
            Code::F(n) => out.push_str(&format!("F{n}")),
            other => out.push_str(match other {
                Code::Enter => "Enter",
                Code::Esc => "Esc",
                Code::Tab => "Tab",
                Code::Backspace => "Backspace",
                Code::Delete => "Delete",
                Code::Left => "←",
                Code::Right => "→",
                Code::Up => "↑",
                Code::Down => "↓",
                Code::Home => "Home",
                Code::End => "End",
                Code::PageUp => "PgUp",
                Code::PageDown => "PgDn",
                Code::Click => "mouse click",
                Code::Char(_) | Code::Digits | Code::BackTab | Code::F(_) => "",
            }),
        }
        out
    }
}

/// Where a binding shows besides the help overlay and the guide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hint {
    /// Only in the help overlay and the guide.
    No,
    /// In the card's full hint line.
    Card,
    /// In the card's full and short hint lines.
    CardShort,
    /// In the footer's hints, this many-th (the footer drops the lowest first).
    Footer(u8),
}

/// One key binding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Binding<C> {
    /// The keys that do it; the first is the one hints show.
    pub keys: &'static [Key],
    /// A word or two for hint lines: "allow".
    pub label: &'static str,
    /// What it does, for the help overlay and the guide. Bindings in a
    /// row with the same help text share one line there.
    pub help: &'static str,
    /// Where else it shows.
    pub hint: Hint,
    /// What it does.
    pub cmd: C,
}

/// Find the binding of `key` in `table`.
pub(crate) fn lookup<C: Clone>(table: &[Binding<C>], key: Key) -> Option<C> {
    table
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(key)))
        .map(|b| b.cmd.clone())
}

/// The on-screen name of the first key bound to `cmd` in `table` ("Ctrl-P").
pub(crate) fn key_name<C: PartialEq>(table: &[Binding<C>], cmd: &C) -> String {
    table
        .iter()
        .find(|b| &b.cmd == cmd)
        .and_then(|b| b.keys.first())
        .map(|k| k.name('-'))
        .unwrap_or_default()
}

/// What `key` means in the composer, from its own table and the chat
/// keys ([`COMPOSER`], [`CHATS`]); a character without Ctrl is typed.
/// `None`: nothing there (the view's own keys, Ctrl-C, or no binding).
pub(crate) fn composer_action(key: Key) -> Option<Action> {
    match lookup(COMPOSER, key).or_else(|| lookup(CHATS, key)) {
        Some(Global::Act(action) | Global::EdgeOrLine(_, action)) => Some(action),
        Some(Global::GoToChat) => match key.code {
            Code::Char(c @ '1'..='9') => Some(Action::GoToChat(c as usize - '0' as usize)),
            _ => None,
        },
        Some(Global::Scroll(_) | Global::Interrupt | Global::ToggleMouse) => None,
        None => match key {
            Key {
                code: Code::Char(c),
                ctrl: false,
                ..
            } => Some(Action::Char(c)),
            _ => None,
        },
    }
}

/// The action as the composer and the keys that mean the same everywhere
/// see it, with the raw key it came from (if it was a key): a context
/// matches that key against its own table's rows ([`lookup_key`]). A key
/// that means nothing in the composer stays [`Action::Key`].
pub(crate) fn split(input: Action) -> (Action, Option<Key>) {
    match input {
        Action::Key(key) => (composer_action(key).unwrap_or(Action::Key(key)), Some(key)),
        other => (other, None),
    }
}

/// Find the binding of the raw key pressed (if the input was a key) in
/// `table`.
pub(crate) fn lookup_key<C: Clone>(table: &[Binding<C>], key: Option<Key>) -> Option<C> {
    lookup(table, key?)
}

/// Where the keys are, as far as their meaning goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    /// Typing a message (with the keys for several chats).
    Composer,
    /// On the cards.
    Cards,
    /// Typing a denial reason.
    Reason,
    /// Editing a kept rule's pattern.
    KeepRule,
    /// A question before trust widens.
    Question,
    /// "Approve all?".
    ConfirmAll,
    /// The mode dropdown.
    ModeMenu,
    /// The rules screen.
    Rules,
    /// The chat list.
    ChatList,
    /// Filling in a form elicitation.
    Form,
}

/// One line of a help table: the keys, what they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// The keys, joined.
    pub keys: String,
    /// What they do.
    pub help: String,
}

/// The rows of a table: bindings next to each other with the same help
/// text share a row. `sep` joins a key's modifiers (`+` in the guide, `-`
/// on screen).
pub(crate) fn rows<C>(table: &[Binding<C>], sep: char) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    let mut last: Option<&str> = None;
    for binding in table {
        let keys: Vec<String> = binding.keys.iter().map(|k| k.name(sep)).collect();
        match out.last_mut() {
            Some(row) if last == Some(binding.help) => {
                row.keys.push_str(", ");
                row.keys.push_str(&keys.join(", "));
            }
            _ => out.push(Row {
                keys: keys.join(", "),
                help: binding.help.to_string(),
            }),
        }
        last = Some(binding.help);
    }
    out
}

/// A hint line: "y allow · n deny · ..." from the bindings `want` picks;
/// bindings with the same label and help text next to each other show as
/// "PgUp/PgDn scroll".
pub(crate) fn hints<C>(table: &[Binding<C>], want: impl Fn(Hint) -> bool) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<String>, &str)> = Vec::new();
    for binding in table.iter().filter(|b| want(b.hint)) {
        let Some(key) = binding.keys.first().map(|k| k.name('-')) else {
            continue;
        };
        match groups.last_mut() {
            Some((help, keys, label)) if *help == binding.help && *label == binding.label => {
                keys.push(key)
            }
            _ => groups.push((binding.help, vec![key], binding.label)),
        }
    }
    groups
        .into_iter()
        .map(|(_, keys, label)| format!("{} {label}", keys.join("/")))
        .collect()
}

/// The hint line of an elicitation's card: answered by the user alone, so
/// only allow (accept; a form is filled in first), deny (decline) and the
/// keys that move between cards, from the card's choices and [`CARDS`].
pub(crate) fn elicitation_hints() -> String {
    let choices: Vec<Binding<Choice>> = choice_bindings()
        .into_iter()
        .filter(|b| matches!(b.cmd, Choice::Allow | Choice::Deny) && b.hint != Hint::No)
        .collect();
    let moves: Vec<Binding<CardCmd>> = CARDS
        .iter()
        .filter(|b| {
            matches!(b.cmd, CardCmd::Next | CardCmd::Expand | CardCmd::ToComposer)
                && b.hint != Hint::No
        })
        .cloned()
        .collect();
    let allow = Choice::Allow.def();
    let deny = Choice::Deny.def();
    let hint = |def: &ChoiceDef| format!("{} {}", def.letter(), def.binding.label);
    let (allow, deny) = (hint(allow), hint(deny));
    hints(&choices, |_| true)
        .into_iter()
        .chain(hints(&moves, |_| true))
        .map(|h| {
            if h == allow {
                format!(
                    "{} accept (a form: fill it in)",
                    Choice::Allow.def().letter()
                )
            } else if h == deny {
                format!("{} decline", Choice::Deny.def().letter())
            } else {
                h
            }
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A card's hint line: its choices that `choice` keeps (the card's own
/// table, `state::CHOICES`), then the keys of [`CARDS`] that
/// `moves` keeps; the full one, or (`short`) the keys the choices do not
/// show.
pub(crate) fn card_line(
    short: bool,
    choice: impl Fn(&Choice) -> bool,
    moves: impl Fn(&CardCmd) -> bool,
) -> String {
    [
        card_hints_where(&choice_bindings(), short, choice),
        card_hints_where(CARDS, short, moves),
    ]
    .into_iter()
    .filter(|line| !line.is_empty())
    .collect::<Vec<_>>()
    .join(" · ")
}

/// The answers of a question, each by its first key: "y / n".
pub(crate) fn answer_keys<C>(table: &[Binding<C>]) -> String {
    table
        .iter()
        .filter_map(|b| b.keys.first().map(|k| k.name('-')))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Every key on a card: its choices', then those that move about it.
pub(crate) fn card_rows(sep: char) -> Vec<Row> {
    let mut out = rows(&choice_bindings(), sep);
    out.extend(rows(CARDS, sep));
    out
}

/// The footer's hints, most important last (the footer drops the first).
pub(crate) fn footer_hints() -> Vec<String> {
    let mut ranks: Vec<u8> = [COMPOSER, CHATS]
        .iter()
        .flat_map(|t| t.iter())
        .filter_map(|b| match b.hint {
            Hint::Footer(rank) => Some(rank),
            _ => None,
        })
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    ranks
        .into_iter()
        .flat_map(|rank| {
            [COMPOSER, CHATS]
                .into_iter()
                .flat_map(move |t| hints(t, |h| h == Hint::Footer(rank)))
        })
        .collect()
}

/// The card's hint line from the bindings whose command `offered` keeps:
/// the full one, or (`short`) the keys the choices do not show.
pub(crate) fn card_hints_where<C>(
    table: &[Binding<C>],
    short: bool,
    offered: impl Fn(&C) -> bool,
) -> String {
    let shown: Vec<&Binding<C>> = table.iter().filter(|b| offered(&b.cmd)).collect();
    let mut groups: Vec<(&str, Vec<String>, &str)> = Vec::new();
    for binding in shown.into_iter().filter(|b| match b.hint {
        Hint::CardShort => true,
        Hint::Card => !short,
        _ => false,
    }) {
        let Some(key) = binding.keys.first().map(|k| k.name('-')) else {
            continue;
        };
        match groups.last_mut() {
            Some((help, keys, label)) if *help == binding.help && *label == binding.label => {
                keys.push(key)
            }
            _ => groups.push((binding.help, vec![key], binding.label)),
        }
    }
    groups
        .into_iter()
        .map(|(_, keys, label)| format!("{} {label}", keys.join("/")))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The card's hint line: the full one, or (`short`) the keys the choices
/// do not show.
pub(crate) fn card_hints(table: &[Binding<impl Sized>], short: bool) -> String {
    hints(table, |h| match h {
        Hint::CardShort => true,
        Hint::Card => !short,
        _ => false,
    })
    .join(" · ")
}

impl Context {
    /// The context's title in the help overlay.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Context::Composer => "Keys: typing a message",
            Context::Cards => "Keys: on a card",
            Context::Reason => "Keys: typing a denial reason",
            Context::KeepRule => "Keys: editing a rule kept from a card",
            Context::Question => "Keys: answering warden's question",
            Context::ConfirmAll => "Keys: approving all cards",
            Context::ModeMenu => "Keys: the mode dropdown",
            Context::Rules => "Keys: the rules screen",
            Context::ChatList => "Keys: the chat list",
            Context::Form => "Keys: filling in a form",
        }
    }

    /// Every key of the context, as help rows (`sep` as in [`rows`]).
    pub(crate) fn rows(self, sep: char) -> Vec<Row> {
        match self {
            Context::Composer => {
                let mut out = rows(COMPOSER, sep);
                out.extend(command_rows());
                out.extend(rows(CHATS, sep));
                out
            }
            Context::Cards => card_rows(sep),
            Context::Reason => rows(REASON, sep),
            Context::KeepRule => rows(KEEP_RULE, sep),
            Context::Question => rows(QUESTION, sep),
            Context::ConfirmAll => rows(CONFIRM_ALL, sep),
            Context::ModeMenu => rows(MODE_MENU, sep),
            Context::Rules => rows(RULES, sep),
            Context::ChatList => rows(CHAT_LIST, sep),
            Context::Form => rows(FORM, sep),
        }
    }
}

/// warden's slash commands as help rows (`/export [FILE]`, what it does),
/// read from the one table the composer runs them from
/// ([`crate::state::drafts::WARDEN_COMMANDS`]).
pub(crate) fn command_rows() -> Vec<Row> {
    crate::state::drafts::WARDEN_COMMANDS
        .iter()
        .map(|(name, help, arg)| Row {
            keys: if arg.is_empty() {
                format!("/{name}")
            } else {
                format!("/{name} {arg}")
            },
            help: (*help).to_string(),
        })
        .collect()
}

#[cfg(test)]
/// A markdown table of `rows` for the guide.
pub(crate) fn markdown_table(head: &str, rows: &[Row]) -> String {
    let mut out = format!("| {head} | what it does |\n| --- | --- |\n");
    for row in rows {
        out.push_str(&format!(
            "| {} | {} |\n",
            row.keys.replace('|', "\\|"),
            row.help.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
/// The guide's key tables: (marker name, table), each between
/// `<!-- keys:NAME -->` and `<!-- /keys -->` there.
pub(crate) fn readme_tables() -> Vec<(&'static str, String)> {
    vec![
        ("composer", markdown_table("key", &rows(COMPOSER, '+'))),
        ("commands", markdown_table("command", &command_rows())),
        ("chats", markdown_table("key", &rows(CHATS, '+'))),
        (
            "chat-list",
            markdown_table("key in the chat list", &rows(CHAT_LIST, '+')),
        ),
        ("cards", markdown_table("key on a card", &card_rows('+'))),
        (
            "mode-menu",
            markdown_table("key in the mode dropdown", &rows(MODE_MENU, '+')),
        ),
        (
            "rules",
            markdown_table("key on the rules screen", &rows(RULES, '+')),
        ),
        ("form", markdown_table("key in a form", &rows(FORM, '+'))),
    ]
}

#[cfg(test)]
/// `readme` with every marked key table replaced by the one generated.
pub(crate) fn render_readme(readme: &str) -> String {
    let mut out = readme.to_string();
    for (name, table) in readme_tables() {
        let open = format!("<!-- keys:{name} -->\n");
        let close = "<!-- /keys -->";
        let Some(start) = out.find(&open).map(|s| s + open.len()) else {
            continue;
        };
        let Some(end) = out[start..].find(close).map(|e| start + e) else {
            continue;
        };
        out.replace_range(start..end, &table);
    }
    out
}

#[cfg(test)]
mod tests;
