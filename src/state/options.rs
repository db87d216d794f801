//! The agent's session options besides its modes (model, thought level,
//! toggles) and its usage: what the picker lists, what the footer shows,
//! and the changes the user picks.

use super::{AppState, Effect, EntryKind};
use crate::model::{SessionOption, SessionOptionValue, Usage};
use crate::sanitize::one_line;

/// A new value the user picked for one of the agent's session options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionPick {
    /// A select option's choice, by id.
    Choice(String),
    /// A boolean option's new value.
    Flag(bool),
}

/// The agent's options and usage, as the chat knows them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionControls {
    /// The options besides the modes, in the agent's order.
    pub options: Vec<SessionOption>,
    /// The last `usage_update`.
    pub usage: Option<Usage>,
}

impl SessionControls {
    /// The model option's current choice, as shown in the footer.
    pub fn model_label(&self) -> Option<String> {
        self.options
            .iter()
            .find(|o| o.is_model())
            .map(|o| one_line(&o.current_label()))
    }

    /// The usage as shown in the footer: `ctx 42% · $0.12`.
    pub fn usage_label(&self) -> Option<String> {
        let usage = self.usage.as_ref()?;
        let mut parts = Vec::new();
        if let (Some(used), Some(size)) = (usage.used, usage.size) {
            let percent = used.saturating_mul(100) / size.max(1);
            parts.push(format!("ctx {percent}%"));
        } else if let Some(used) = usage.used {
            parts.push(format!("ctx {}", tokens(used)));
        }
        if let Some((amount, currency)) = &usage.cost {
            parts.push(if currency == "USD" {
                format!("${amount:.2}")
            } else {
                format!("{amount:.2} {}", one_line(currency))
            });
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// `12k`, `1.2M` tokens.
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

impl AppState {
    /// The agent sent its options (at the session's start, in an update,
    /// or answering a change): they replace the ones known.
    pub(super) fn on_options(&mut self, options: Vec<SessionOption>) {
        self.controls.options = options;
    }

    /// The agent sent a `usage_update`.
    pub(super) fn on_usage(&mut self, usage: Usage) {
        self.controls.usage = Some(usage);
    }

    /// Pick a value for option `option` (index into `controls.options`):
    /// for a select, its choice `choice`; for a boolean, the other value.
    pub(super) fn pick_option(&mut self, option: usize, choice: usize) -> Vec<Effect> {
        let Some(opt) = self.controls.options.get(option) else {
            return Vec::new();
        };
        let value = match &opt.value {
            SessionOptionValue::Select { current, choices } => {
                let Some(picked) = choices.get(choice) else {
                    return Vec::new();
                };
                if &picked.id == current {
                    return Vec::new();
                }
                OptionPick::Choice(picked.id.clone())
            }
            SessionOptionValue::Boolean(on) => OptionPick::Flag(!on),
        };
        vec![Effect::SetSessionOption {
            option_id: opt.id.clone(),
            value,
        }]
    }

    /// The agent answered a change of one of its options.
    pub(super) fn on_option_set(
        &mut self,
        option: String,
        result: Result<Vec<SessionOption>, String>,
    ) {
        match result {
            Ok(options) => {
                let name = options
                    .iter()
                    .find(|o| o.id == option)
                    .map(|o| format!("{}: {}", one_line(&o.name), one_line(&o.current_label())));
                if !options.is_empty() {
                    self.controls.options = options;
                }
                if let Some(line) = name {
                    self.transcript.push(EntryKind::Info(line));
                }
            }
            Err(message) => {
                self.transcript.push(EntryKind::Error {
                    message: format!(
                        "the agent did not change its option `{}`: {}",
                        one_line(&option),
                        one_line(&message)
                    ),
                    detail: Vec::new(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OptionChoice;
    use pretty_assertions::assert_eq;

    fn model(current: &str) -> SessionOption {
        SessionOption {
            id: "model".into(),
            name: "Model".into(),
            description: None,
            category: Some("model".into()),
            value: SessionOptionValue::Select {
                current: current.into(),
                choices: vec![
                    OptionChoice {
                        id: "a".into(),
                        name: "Alpha".into(),
                        description: None,
                    },
                    OptionChoice {
                        id: "b".into(),
                        name: "Beta".into(),
                        description: None,
                    },
                ],
            },
        }
    }

    #[test]
    fn picking_a_choice_sends_it_and_the_current_one_sends_nothing() {
        let mut s = AppState::new("demo", "/w");
        s.on_options(vec![model("a")]);
        assert_eq!(s.controls.model_label().as_deref(), Some("Alpha"));
        assert_eq!(s.pick_option(0, 0), Vec::new());
        assert_eq!(
            s.pick_option(0, 1),
            vec![Effect::SetSessionOption {
                option_id: "model".into(),
                value: OptionPick::Choice("b".into()),
            }]
        );
    }

    #[test]
    fn usage_label_shows_the_context_share_and_cost() {
        let mut s = AppState::new("demo", "/w");
        assert_eq!(s.controls.usage_label(), None);
        s.on_usage(Usage {
            used: Some(50_000),
            size: Some(200_000),
            cost: Some((0.1234, "USD".into())),
        });
        assert_eq!(s.controls.usage_label().as_deref(), Some("ctx 25% · $0.12"));
        s.on_usage(Usage {
            used: Some(12_345),
            size: None,
            cost: Some((1.5, "EUR".into())),
        });
        assert_eq!(
            s.controls.usage_label().as_deref(),
            Some("ctx 12k · 1.50 EUR")
        );
    }
}
