//! warden's own slash commands (`/clear`, `/mode`, `/help`, ...): the list
//! the composer offers and what each does when sent.

use super::*;

/// warden's own slash commands: name, what it does, what to type after it.
pub(crate) const WARDEN_COMMANDS: [(&str, &str, &str); 16] = [
    (
        "mode",
        "switch the chat's mode (no argument: the mode menu)",
        "plan|default|auto",
    ),
    (
        "model",
        "the agent's model and options (the Alt+M menu)",
        "",
    ),
    ("new", "open a new chat (Ctrl+N)", ""),
    ("resume", "reopen a past chat (Alt+O)", ""),
    (
        "export",
        "write this chat as Markdown (FILE here, else the exports folder)",
        "[FILE]",
    ),
    (
        "login",
        "run the agent's terminal sign-in here, then restart it",
        "[METHOD]",
    ),
    (
        "undo",
        "undo the last turn's changes; again, the turn before",
        "",
    ),
    ("redo", "undo the last /undo: put back what it restored", ""),
    (
        "changes",
        "show what the last turn did to the files, as diffs",
        "",
    ),
    (
        "checkpoints",
        "list this chat's turns and their files; restore to before any",
        "",
    ),
    ("help", "list the commands and the composer's keys", ""),
    (
        "remote",
        "serve the waiting cards to your phone (again: a new URL, old ones out)",
        "",
    ),
    (
        "clear",
        "start a new session in this chat (the last one stays in /resume)",
        "",
    ),
    (
        "usage",
        "the tokens and cost the agent reported so far (also /cost)",
        "",
    ),
    (
        "permissions",
        "the rules screen: bypasses, rules and grants (Ctrl+G)",
        "",
    ),
    ("exit", "leave warden (Ctrl+D)", ""),
];

/// The command only an agent that lists sign-in methods is offered.
pub(super) const SIGN_IN: &str = "login";

impl ChatState {
    /// warden's own slash commands; `None` when `text` is not one.
    pub(super) fn own_command(&mut self, text: &str) -> Option<Vec<Effect>> {
        let rest = text.trim().strip_prefix('/')?;
        let (name, arg) = match rest.split_once(char::is_whitespace) {
            Some((name, arg)) => (name, arg.trim()),
            None => (rest, ""),
        };
        let effects = match name {
            "mode" => match arg {
                "" => self.open_mode_menu(),
                "plan" => self.set_mode(Mode::Plan),
                "default" => self.set_mode(Mode::Default),
                "auto" => self.set_mode(Mode::Auto),
                other => {
                    self.view.notice = Some(format!(
                        "no mode `{}`: plan, default or auto",
                        crate::sanitize::one_line(other)
                    ));
                    Vec::new()
                }
            },
            "model" => self.open_mode_menu(),
            "new" => vec![Effect::Drafts(DraftsEffect::Workspace(Action::NewChat))],
            "resume" => vec![Effect::Drafts(DraftsEffect::Workspace(Action::PastChats))],
            "export" => vec![Effect::Drafts(DraftsEffect::Export(
                (!arg.is_empty()).then(|| arg.to_string()),
            ))],
            "remote" => vec![Effect::Drafts(DraftsEffect::Remote)],
            SIGN_IN if !self.view.drafts.sign_in => {
                // The agent's own command of that name, if it has one.
                if self.view.drafts.commands.iter().any(|c| c.name == SIGN_IN) {
                    return None;
                }
                self.view.notice = Some(format!(
                    "{} lists no way to sign in: /login is for agents that do",
                    crate::sanitize::one_line(&self.session.agent_name)
                ));
                Vec::new()
            }
            SIGN_IN => vec![Effect::Drafts(DraftsEffect::Login(
                (!arg.is_empty()).then(|| arg.to_string()),
            ))],
            "clear" => self.clear(),
            "usage" | "cost" => {
                let report = self.session.controls.usage_report();
                self.info(format!("usage: {}", report.join(" · ")));
                Vec::new()
            }
            "permissions" => {
                self.view.focus.open(Modal::Rules {
                    selected: 0,
                    confirm: false,
                });
                Vec::new()
            }
            "exit" => self.quit(),
            "undo" | "redo" | "changes" | "checkpoints" => self.checkpoint_command(name),
            "help" => {
                self.help();
                Vec::new()
            }
            _ => return None,
        };
        Some(effects)
    }

    /// `/clear`: a new session in this chat, on the same agent; the
    /// transcript starts empty, the last session stays in its record.
    fn clear(&mut self) -> Vec<Effect> {
        let refusal = if self.is_busy() {
            Some("a turn is running: Esc cancels it, then /clear")
        } else if !self.gate.approvals.is_empty() {
            Some("requests are waiting: answer them, then /clear")
        } else if !matches!(self.session.connection, Connection::Ready { .. }) {
            Some("the agent is not connected")
        } else {
            None
        };
        if let Some(refusal) = refusal {
            self.view.notice = Some(refusal.into());
            return Vec::new();
        }
        self.session.transcript.clear();
        self.session.connection = Connection::Starting;
        self.session.agent_modes = None;
        self.session.expected_agent_mode = None;
        self.session.opening = None;
        self.session.title = None;
        self.session.last_stop = None;
        self.session.controls = super::super::SessionControls::default();
        self.gate.asking_mode = None;
        self.gate.prompt_blocked = None;
        self.view.drafts.queue.clear();
        self.info("cleared: a new session; the last one is in the chat records (/resume)");
        vec![Effect::NewSession]
    }

    fn open_mode_menu(&mut self) -> Vec<Effect> {
        let current = self
            .mode_menu_items()
            .iter()
            .position(|i| *i == super::super::ModeItem::Chat(self.gate.mode));
        self.view.focus.open(Modal::ModeMenu(current.unwrap_or(0)));
        Vec::new()
    }

    fn help(&mut self) {
        let mut lines = vec!["warden's commands:".to_string()];
        for (name, description, hint) in self.view.drafts.own_commands() {
            let hint = if hint.is_empty() {
                String::new()
            } else {
                format!(" {hint}")
            };
            lines.push(format!("  /{name}{hint}: {description}"));
        }
        if !self.view.drafts.commands.is_empty() {
            lines.push("the agent's commands (sent as the prompt):".into());
            for c in &self.view.drafts.commands {
                lines.push(format!(
                    "  /{}: {}",
                    crate::sanitize::one_line(&c.name),
                    crate::sanitize::one_line(&c.description)
                ));
            }
        }
        lines.push(
            "keys: ↑/↓ history · Ctrl+R search it · Ctrl+Y bring back a cleared message · \
             Ctrl+X external editor · Enter during a turn queues · Ctrl+S send now · \
             Alt+↑ edit the queued message"
                .into(),
        );
        self.info(lines.join("\n"));
    }
}
