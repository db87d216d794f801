//! Styles for every widget, from the 16 ANSI colour names plus modifiers, so
//! the user's terminal theme applies. With `NO_COLOR` set (and not empty) the
//! colours are dropped and only the modifiers remain.

use ratatui::style::{Color, Modifier, Style};

use crate::model::PlanStatus;
use crate::policy::Mode;
use crate::state::ToolState;

/// The palette: whether colours may be used at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Theme {
    color: bool,
}

impl Theme {
    /// Colours on, unless `NO_COLOR` is set to a non-empty value. Read once,
    /// when the view is built.
    pub(crate) fn from_env() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme { color: !no_color }
    }

    /// A theme with colours on or off, whatever the environment says.
    #[cfg(test)]
    pub(crate) fn with_color(color: bool) -> Self {
        Theme { color }
    }

    /// Foreground `c`, or nothing under `NO_COLOR`.
    pub(crate) fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub(crate) fn plain(self) -> Style {
        Style::new()
    }

    pub(crate) fn dim(self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    pub(crate) fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub(crate) fn user_marker(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn heading(self, level: usize) -> Style {
        let style = self.fg(Color::Magenta).add_modifier(Modifier::BOLD);
        if level <= 1 {
            style.add_modifier(Modifier::UNDERLINED)
        } else {
            style
        }
    }

    pub(crate) fn heading_marker(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::DIM)
    }

    pub(crate) fn inline_code(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub(crate) fn code_block(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub(crate) fn link(self) -> Style {
        self.fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
    }

    pub(crate) fn url(self) -> Style {
        self.dim()
    }

    pub(crate) fn quote_bar(self) -> Style {
        self.fg(Color::Green).add_modifier(Modifier::DIM)
    }

    pub(crate) fn list_marker(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub(crate) fn rule(self) -> Style {
        self.dim()
    }

    pub(crate) fn thought(self) -> Style {
        Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC)
    }

    /// The status symbol of a tool call and its colour.
    pub(crate) fn tool_state(self, state: ToolState) -> (&'static str, Style) {
        match state {
            ToolState::Pending => ("○", self.fg(Color::DarkGray)),
            ToolState::AwaitingApproval => {
                ("?", self.fg(Color::Yellow).add_modifier(Modifier::BOLD))
            }
            ToolState::Approved => ("✓", self.fg(Color::Yellow)),
            ToolState::InProgress => ("◐", self.fg(Color::Blue)),
            ToolState::Completed => ("✓", self.fg(Color::Green)),
            ToolState::Failed => ("✗", self.fg(Color::Red)),
            ToolState::Rejected => ("⊘", self.fg(Color::Red)),
            ToolState::Cancelled => ("⊘", self.dim()),
            ToolState::NoResult => ("◌", self.dim()),
        }
    }

    pub(crate) fn tool_kind(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub(crate) fn tool_title(self) -> Style {
        self.bold()
    }

    pub(crate) fn command(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub(crate) fn diff_header(self) -> Style {
        self.bold()
    }

    pub(crate) fn diff_hunk(self) -> Style {
        self.fg(Color::Cyan)
    }

    pub(crate) fn diff_add(self) -> Style {
        self.fg(Color::Green)
    }

    pub(crate) fn diff_del(self) -> Style {
        self.fg(Color::Red)
    }

    /// The checkbox of a plan entry and its style.
    pub(crate) fn plan(self, status: PlanStatus) -> (&'static str, Style) {
        match status {
            PlanStatus::Pending => ("☐", self.plain()),
            PlanStatus::InProgress => ("◐", self.fg(Color::Yellow)),
            PlanStatus::Completed => ("☑", self.fg(Color::Green).add_modifier(Modifier::DIM)),
        }
    }

    pub(crate) fn error(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn error_detail(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::DIM)
    }

    pub(crate) fn notice(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub(crate) fn border(self) -> Style {
        self.fg(Color::DarkGray)
    }

    pub(crate) fn placeholder(self) -> Style {
        self.dim()
    }

    pub(crate) fn working(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub(crate) fn starting(self) -> Style {
        self.fg(Color::Yellow)
    }

    pub(crate) fn down(self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn agent_mode(self) -> Style {
        self.fg(Color::Magenta)
    }

    pub(crate) fn follow_hint(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    /// The chat's permission mode: Plan cyan, Default plain, Auto yellow.
    pub(crate) fn mode(self, mode: Mode) -> Style {
        match mode {
            Mode::Plan => self.fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Mode::Default => self.bold(),
            Mode::Auto => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        }
    }

    /// The `BYPASS` badge of an agent whose calls run without asking.
    pub(crate) fn bypass(self) -> Style {
        self.fg(Color::Red)
            .add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }

    /// "N pending · Ctrl-P review" in the footer.
    pub(crate) fn pending(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// The border of the selected approval card: loud while it has the keys.
    pub(crate) fn card_border(self, focused: bool) -> Style {
        if focused {
            self.fg(Color::Yellow)
        } else {
            self.fg(Color::DarkGray)
        }
    }

    /// "Permission ·" at the top of a card.
    pub(crate) fn card_label(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// A choice that lets the call run.
    pub(crate) fn allow(self) -> Style {
        self.fg(Color::Green)
    }

    /// A choice that stops the call.
    pub(crate) fn reject(self) -> Style {
        self.fg(Color::Red)
    }

    /// The key that picks a choice.
    pub(crate) fn choice_key(self) -> Style {
        self.bold()
    }

    /// Added to the highlighted choice or dropdown item.
    pub(crate) fn highlight(self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    }

    /// The "approve all?" question.
    pub(crate) fn confirm(self) -> Style {
        self.fg(Color::Yellow)
            .add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }

    /// The prompt of the deny-with-reason field.
    pub(crate) fn prompt(self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// The bar beside the chat on screen in the chat list.
    pub(crate) fn chat_marker(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// A section title in the mode dropdown.
    pub(crate) fn section(self) -> Style {
        self.bold().add_modifier(Modifier::UNDERLINED)
    }
}
