//! The agent's session options besides its modes (model, thought level,
//! toggles) and its usage: what the picker lists, what the footer shows,
//! and the changes the user picks.

use super::{ChatState, Effect, EntryKind};
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
    /// What the agent said of its usage (`usage_update`s and prompt
    /// answers' `usage`; each part kept until it sends that part again).
    pub usage: Option<Usage>,
    /// The model picked from the session's `models`, until the agent
    /// answers `session/set_model` (its answer does not name it).
    pub model_pick: Option<String>,
    /// The context's tokens when the running turn began (or when the agent
    /// first told them in it): what the turn added is measured from here.
    pub turn_base: Option<u64>,
    /// The tokens of every turn the agent reported (its prompt answers'
    /// `usage`), added up, in this chat's session.
    pub session_tokens: Option<u64>,
}

impl SessionControls {
    /// The model option's current choice, as shown in the footer.
    pub fn model_label(&self) -> Option<String> {
        self.options
            .iter()
            .find(|o| o.is_model())
            .map(|o| one_line(&o.current_label()))
    }

    /// The tokens the running turn added to the context so far, when the
    /// agent tells its context's size (`usage_update`'s `used`).
    pub fn turn_tokens_so_far(&self) -> Option<u64> {
        let used = self.usage.as_ref()?.used?;
        let added = used.checked_sub(self.turn_base?)?;
        (added > 0).then_some(added)
    }

    /// "1.5k tokens": what the running turn added so far, for the footer.
    pub fn turn_tokens_label(&self) -> Option<String> {
        self.turn_tokens_so_far()
            .map(|n| format!("{} tokens", tokens(n)))
    }

    /// Everything known of the usage, for `/usage`: one line each.
    pub fn usage_report(&self) -> Vec<String> {
        let Some(usage) = &self.usage else {
            return vec!["the agent has not said what it used".into()];
        };
        let mut lines = Vec::new();
        match (usage.used, usage.size) {
            (Some(used), Some(size)) => lines.push(format!(
                "context: {} of {} tokens ({}%)",
                tokens(used),
                tokens(size),
                used.saturating_mul(100) / size.max(1)
            )),
            (Some(used), None) => lines.push(format!("context: {} tokens", tokens(used))),
            (None, Some(size)) => lines.push(format!("context window: {} tokens", tokens(size))),
            (None, None) => {}
        }
        if let Some(turn) = usage.turn_tokens {
            lines.push(format!("last turn: {} tokens", tokens(turn)));
        }
        if let Some(total) = self.session_tokens {
            lines.push(format!("turns so far: {} tokens", tokens(total)));
        }
        if let Some(cost) = cost_label(usage) {
            lines.push(format!("cost so far: {cost}"));
        }
        if lines.is_empty() {
            lines.push("the agent has not said what it used".into());
        }
        lines
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
        if let Some(turn) = usage.turn_tokens {
            parts.push(format!("{} tok", tokens(turn)));
        }
        parts.extend(cost_label(usage));
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// The cost so far: `$0.12`, `<$0.01`, `1.50 EUR`.
fn cost_label(usage: &Usage) -> Option<String> {
    let (amount, currency) = usage.cost.as_ref()?;
    Some(if currency == "USD" && *amount > 0.0 && *amount < 0.01 {
        "<$0.01".to_string()
    } else if currency == "USD" {
        format!("${amount:.2}")
    } else {
        format!("{amount:.2} {}", one_line(currency))
    })
}

/// `950`, `1.5k`, `12k`, `1.2M` tokens.
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1_000.0),
        10_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

impl ChatState {
    /// The agent sent its options (at the session's start, in an update,
    /// or answering a change): they replace the ones known. The option made
    /// from the session's `models` stays until a new one comes, and is
    /// shown only while no config option picks the model (one picker).
    pub(super) fn on_options(&mut self, options: Vec<SessionOption>) {
        let (models, mut options): (Vec<_>, Vec<_>) = options
            .into_iter()
            .partition(|o| o.id == SessionOption::MODELS_ID);
        let models = models.into_iter().next().or_else(|| {
            self.session
                .controls
                .options
                .iter()
                .find(|o| o.id == SessionOption::MODELS_ID)
                .cloned()
        });
        if let Some(models) = models
            && !options.iter().any(SessionOption::is_model)
        {
            options.push(models);
        }
        self.session.controls.options = options;
    }

    /// The agent sent a `usage_update` or a prompt answer's `usage`: the
    /// parts it names replace the ones known, the others stay.
    pub(super) fn on_usage(&mut self, usage: Usage) {
        let controls = &mut self.session.controls;
        if self.session.turn.is_some() && controls.turn_base.is_none() {
            controls.turn_base = usage.used;
        }
        if let Some(turn) = usage.turn_tokens {
            controls.session_tokens =
                Some(controls.session_tokens.unwrap_or(0).saturating_add(turn));
        }
        let known = self.session.controls.usage.take().unwrap_or_default();
        self.session.controls.usage = Some(Usage {
            used: usage.used.or(known.used),
            size: usage.size.or(known.size),
            cost: usage.cost.or(known.cost),
            turn_tokens: usage.turn_tokens.or(known.turn_tokens),
        });
    }

    /// Pick a value for option `option` (index into `controls.options`):
    /// for a select, its choice `choice`; for a boolean, the other value.
    pub(super) fn pick_option(&mut self, option: usize, choice: usize) -> Vec<Effect> {
        let Some(opt) = self.session.controls.options.get(option) else {
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
                if opt.id == SessionOption::MODELS_ID {
                    self.session.controls.model_pick = Some(picked.id.clone());
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
            // `session/set_model` answers nothing: the pick is the model now.
            Ok(options) if options.is_empty() && option == SessionOption::MODELS_ID => {
                let pick = self.session.controls.model_pick.take();
                let models = self
                    .session
                    .controls
                    .options
                    .iter_mut()
                    .find(|o| o.id == SessionOption::MODELS_ID);
                if let (Some(models), Some(pick)) = (models, pick) {
                    if let SessionOptionValue::Select { current, .. } = &mut models.value {
                        *current = pick;
                    }
                    let line = format!(
                        "{}: {}",
                        one_line(&models.name),
                        one_line(&models.current_label())
                    );
                    self.session.transcript.push(EntryKind::Info(line));
                }
            }
            Ok(options) => {
                let name = options
                    .iter()
                    .find(|o| o.id == option)
                    .map(|o| format!("{}: {}", one_line(&o.name), one_line(&o.current_label())));
                if !options.is_empty() {
                    self.on_options(options);
                }
                if let Some(line) = name {
                    self.session.transcript.push(EntryKind::Info(line));
                }
            }
            Err(message) => {
                if option == SessionOption::MODELS_ID {
                    self.session.controls.model_pick = None;
                }
                self.session.transcript.push(EntryKind::Error {
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
        let mut s = ChatState::new("demo", "/w");
        s.on_options(vec![model("a")]);
        assert_eq!(s.session.controls.model_label().as_deref(), Some("Alpha"));
        assert_eq!(s.pick_option(0, 0), Vec::new());
        assert_eq!(
            s.pick_option(0, 1),
            vec![Effect::SetSessionOption {
                option_id: "model".into(),
                value: OptionPick::Choice("b".into()),
            }]
        );
    }

    fn models(current: &str) -> SessionOption {
        SessionOption {
            id: SessionOption::MODELS_ID.into(),
            ..model(current)
        }
    }

    #[test]
    fn models_stay_beside_config_updates_and_a_model_option_wins() {
        let mut s = ChatState::new("demo", "/w");
        s.on_options(vec![models("a")]);
        assert_eq!(s.session.controls.model_label().as_deref(), Some("Alpha"));
        // A config_option_update without a model keeps the models.
        s.on_options(Vec::new());
        assert_eq!(s.session.controls.options.len(), 1);
        // Picking one sends it; the empty answer makes it current.
        let effects = s.pick_option(0, 1);
        assert_eq!(
            effects,
            vec![Effect::SetSessionOption {
                option_id: SessionOption::MODELS_ID.into(),
                value: OptionPick::Choice("b".into()),
            }]
        );
        s.on_option_set(SessionOption::MODELS_ID.into(), Ok(Vec::new()));
        assert_eq!(s.session.controls.model_label().as_deref(), Some("Beta"));
        // A model config option is the one picker.
        s.on_options(vec![model("a")]);
        let ids: Vec<&str> = s
            .session
            .controls
            .options
            .iter()
            .map(|o| o.id.as_str())
            .collect();
        assert_eq!(ids, vec!["model"]);
    }

    #[test]
    fn usage_label_shows_the_context_share_and_cost() {
        let mut s = ChatState::new("demo", "/w");
        assert_eq!(s.session.controls.usage_label(), None);
        s.on_usage(Usage {
            used: Some(50_000),
            size: Some(200_000),
            cost: Some((0.1234, "USD".into())),
            turn_tokens: None,
        });
        assert_eq!(
            s.session.controls.usage_label().as_deref(),
            Some("ctx 25% · $0.12")
        );
        s.on_usage(Usage {
            used: Some(12_345),
            size: None,
            cost: Some((1.5, "EUR".into())),
            turn_tokens: None,
        });
        assert_eq!(
            s.session.controls.usage_label().as_deref(),
            Some("ctx 6% · 1.50 EUR")
        );
        // A prompt answer's tokens join what is known; a usage_update
        // without `used` keeps the size and cost it sends.
        s.on_usage(Usage {
            turn_tokens: Some(60),
            ..Usage::default()
        });
        assert_eq!(
            s.session.controls.usage_label().as_deref(),
            Some("ctx 6% · 60 tok · 1.50 EUR")
        );
    }
}
