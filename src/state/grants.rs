//! What decides for the user beyond the mode: per-agent bypass, rules, and
//! this chat's grants. the rules screen lists them and revokes them; "keep
//! as rule" adds one from a card. Writes to the settings file are effects.

use crate::policy::{Rule, RuleDecision, suggest_rule, wider_path};
use crate::sanitize::one_line;

use super::{Action, ChatState, Composer, Effect, Modal, Msg};

/// What warden says when the settings file does not load.
pub(crate) const NOT_LOADED: &str = "settings did not load: automatic allows are off until fixed";

/// The only rule of a run whose settings file did not load: ask about every
/// request. The file's deny and ask rules are unknown then, so nothing may
/// run by itself: not in Auto, not by a bypass, an allow rule, a chat grant
/// or the read default (deny rules about reads are unknown too).
pub fn fail_closed_rule() -> Rule {
    let mut rule = Rule::new(RuleDecision::Ask);
    rule.note = Some(NOT_LOADED.to_string());
    rule
}

/// A change to the settings file, carried out by the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsEdit {
    /// `agents.NAME.bypass_permissions = value`.
    SetBypass { agent: String, value: bool },
    /// Append a `[[rules]]` entry.
    AppendRule(Rule),
    /// Remove the rule at `index` if it is still `expected`.
    RemoveRule { index: usize, expected: Rule },
    /// Add `host` (`host:port`) to `agents.NAME.sandbox.allow_hosts`: a
    /// network card's "always allow this host for this agent".
    AllowHost { agent: String, host: String },
}

/// A rule being kept from a card ("keep as rule"): the rule, the card it
/// came from, and the patterns its field offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDraft {
    /// The rule, its pattern as proposed (the field's text replaces it).
    pub rule: Rule,
    /// The card `p` was pressed on: Enter keeps the rule and allows it.
    pub card: super::RequestId,
    /// The narrowest pattern, which the field starts with.
    pub narrow: String,
    /// A wider pattern (the file's directory), offered only second: Tab.
    pub wider: Option<String>,
}

impl RuleDraft {
    /// The pattern Tab puts in the field now holding `text`: the wider
    /// one, or back to the narrowest.
    pub(crate) fn other(&self, text: &str) -> Option<&str> {
        let wider = self.wider.as_deref()?;
        Some(if text == wider { &self.narrow } else { wider })
    }
}

/// One line of the rules screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantItem {
    /// An agent whose requests are allowed without asking.
    Bypass(String),
    /// A rule of the settings file (index in file order).
    Rule(usize),
    /// An "allow for this chat" grant (index into `grants`).
    ChatGrant(usize),
}

impl ChatState {
    /// Everything that currently decides for the user, in display order.
    pub fn grant_items(&self) -> Vec<GrantItem> {
        let mut items: Vec<GrantItem> = self
            .gate
            .bypassed_agents
            .iter()
            .cloned()
            .map(GrantItem::Bypass)
            .collect();
        items.extend((0..self.gate.rules.len()).map(GrantItem::Rule));
        items.extend((0..self.gate.grants.len()).map(GrantItem::ChatGrant));
        items
    }

    /// A one-line description of an item.
    pub(crate) fn describe_grant(&self, item: &GrantItem) -> String {
        match item {
            GrantItem::Bypass(agent) => format!(
                "bypass: every request of `{}` is allowed (deny and ask rules still apply)",
                one_line(agent)
            ),
            GrantItem::Rule(i) => self.gate.rules.get(*i).map_or_else(String::new, |r| {
                format!("rule {}: {}", i + 1, one_line(&r.describe()))
            }),
            GrantItem::ChatGrant(i) => self.gate.grants.get(*i).map_or_else(String::new, |g| {
                format!("this chat: allow {}", g.describe())
            }),
        }
    }

    /// The settings block name of this chat's agent, else its identity
    /// (never what it calls itself).
    pub(crate) fn settings_agent(&self) -> String {
        self.session
            .settings_agent
            .clone()
            .unwrap_or_else(|| self.gate.agent_policy.name.clone())
    }

    /// The agent as a bypass names it: the block it is written to (its
    /// identity, e.g. `run-agent`), with the name the agent calls itself
    /// in parentheses when that differs. One line, sanitized.
    pub(crate) fn bypass_name(&self) -> String {
        let agent = one_line(&self.settings_agent());
        let shown = one_line(&self.session.agent_name);
        if shown.is_empty() || shown == agent {
            agent
        } else {
            format!("{agent} ({shown})")
        }
    }

    /// Record bypass for this agent (the card's `b`).
    pub(crate) fn persist_bypass(&mut self) -> Effect {
        let agent = self.settings_agent();
        if !self.gate.bypassed_agents.contains(&agent) {
            self.gate.bypassed_agents.push(agent.clone());
        }
        Effect::EditSettings(SettingsEdit::SetBypass { agent, value: true })
    }

    /// Start "keep as rule" for the selected card: the narrowest sensible
    /// rule, its pattern editable in place, a wider one a Tab away.
    pub(crate) fn start_keep_rule(&mut self) {
        let Some(approval) = self.gate.approvals.get(self.view.cursor.selected) else {
            return;
        };
        let wider = wider_path(
            &approval.view,
            self.gate.home.as_deref(),
            &self.session.cwd_path,
        );
        let card = approval.id;
        let rule = match suggest_rule(
            &approval.view,
            &self.settings_agent(),
            self.gate.home.as_deref(),
            &self.session.cwd_path,
        ) {
            Ok(rule) => rule,
            Err(why) => {
                self.view.notice = Some(format!("no rule to keep: {why}"));
                return;
            }
        };
        let narrow = rule
            .command
            .as_deref()
            .or(rule.path.as_deref())
            .or(rule.tool.as_deref())
            .unwrap_or("")
            .to_string();
        let mut field = Composer::default();
        field.set(&narrow);
        let wider = wider.filter(|w| rule.path.is_some() && *w != narrow);
        self.gate.rule_draft = Some(RuleDraft {
            rule,
            card,
            narrow,
            wider,
        });
        self.view.focus.open(Modal::KeepRule(field));
    }

    /// Keys while editing the kept rule's pattern.
    pub(crate) fn on_keep_rule_key(
        &mut self,
        action: &Action,
        key: Option<crate::keys::Key>,
        mut field: Composer,
    ) -> Vec<Effect> {
        use crate::keys::{self, RuleCmd};
        match keys::lookup_key(keys::KEEP_RULE, key) {
            Some(RuleCmd::Done) => {
                let Some(draft) = self.gate.rule_draft.take() else {
                    return Vec::new();
                };
                let RuleDraft { mut rule, card, .. } = draft;
                let pattern = field.text().trim().to_string();
                if pattern.is_empty() {
                    self.view.notice =
                        Some("an empty pattern would match too much: rule not kept".into());
                    return Vec::new();
                }
                if rule.command.is_some() {
                    rule.command = Some(pattern);
                } else if rule.path.is_some() {
                    rule.path = Some(pattern);
                } else if rule.tool.is_some() {
                    rule.tool = Some(pattern);
                }
                self.info(format!("kept as a rule: {}", one_line(&rule.describe())));
                self.gate.rules.push(rule.clone());
                let mut effects = vec![Effect::EditSettings(SettingsEdit::AppendRule(rule))];
                // One step, as "Yes, and don't ask again": the card `p` was
                // pressed on is allowed; the other waiting cards the rule
                // covers are asked about.
                effects.extend(self.allow_card(card));
                effects.extend(self.redecide_covered());
                effects
            }
            Some(RuleCmd::Other) => {
                let other = self
                    .gate
                    .rule_draft
                    .as_ref()
                    .and_then(|d| d.other(field.text().trim()))
                    .map(str::to_string);
                if let Some(other) = other {
                    field.set(&other);
                }
                self.view.focus.open(Modal::KeepRule(field));
                Vec::new()
            }
            Some(RuleCmd::Back) => {
                self.gate.rule_draft = None;
                Vec::new()
            }
            None => {
                super::edit_composer(&mut field, action);
                self.view.focus.open(Modal::KeepRule(field));
                Vec::new()
            }
        }
    }

    /// Keys on the rules screen.
    pub(crate) fn on_grants_key(
        &mut self,
        key: Option<crate::keys::Key>,
        selected: usize,
        confirm: bool,
    ) -> Vec<Effect> {
        let items = self.grant_items();
        let last = items.len().saturating_sub(1);
        if confirm {
            // "Remove it?" is a question: its table answers it.
            let yes = crate::keys::lookup_key(crate::keys::QUESTION, key);
            if yes == Some(crate::keys::AnswerCmd::Yes) {
                let effects = self.revoke(items.get(selected));
                let remaining = self.grant_items().len();
                self.view.focus.open(Modal::Rules {
                    selected: selected.min(remaining.saturating_sub(1)),
                    confirm: false,
                });
                return effects;
            }
            self.view.focus.open(Modal::Rules {
                selected,
                confirm: false,
            });
            return Vec::new();
        }
        use crate::keys::{self, ListCmd};
        match keys::lookup_key(keys::RULES, key) {
            Some(ListCmd::Up) => {
                self.view.focus.open(Modal::Rules {
                    selected: selected.saturating_sub(1),
                    confirm: false,
                });
            }
            Some(ListCmd::Down) => {
                self.view.focus.open(Modal::Rules {
                    selected: (selected + 1).min(last),
                    confirm: false,
                });
            }
            Some(ListCmd::Remove) if !items.is_empty() => {
                self.view.focus.open(Modal::Rules {
                    selected,
                    confirm: true,
                });
            }
            Some(ListCmd::Close) => self.close_grants(),
            _ => {
                self.view.focus.open(Modal::Rules {
                    selected,
                    confirm: false,
                });
            }
        }
        Vec::new()
    }

    /// Close the rules screen: the keys go back to the pane beneath.
    fn close_grants(&mut self) {
        if matches!(self.view.focus.modal, Some(Modal::Rules { .. })) {
            self.view.focus.modal = None;
        }
    }

    fn revoke(&mut self, item: Option<&GrantItem>) -> Vec<Effect> {
        match item {
            Some(GrantItem::Bypass(agent)) => {
                self.gate.bypassed_agents.retain(|a| a != agent);
                if *agent == self.settings_agent() {
                    self.gate.agent_policy.bypass = false;
                }
                self.info(format!("revoked: bypass for {}", one_line(agent)));
                vec![Effect::EditSettings(SettingsEdit::SetBypass {
                    agent: agent.clone(),
                    value: false,
                })]
            }
            Some(GrantItem::Rule(index)) => {
                if *index >= self.gate.rules.len() {
                    return Vec::new();
                }
                // The settings did not load: only fixing the file lifts this.
                if self.gate.rules[*index] == fail_closed_rule() {
                    self.view.notice = Some(format!(
                        "{}: fix the settings file and restart warden",
                        NOT_LOADED
                    ));
                    return Vec::new();
                }
                let expected = self.gate.rules.remove(*index);
                self.info(format!("revoked: rule {}", one_line(&expected.describe())));
                vec![Effect::EditSettings(SettingsEdit::RemoveRule {
                    index: *index,
                    expected,
                })]
            }
            Some(GrantItem::ChatGrant(index)) => {
                if *index < self.gate.grants.len() {
                    let grant = self.gate.grants.remove(*index);
                    self.info(format!("revoked: allow {}", grant.describe()));
                }
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// The runtime wrote (or re-read) the settings file.
    pub(super) fn on_settings(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::SettingsChanged {
                rules,
                bypassed,
                agent_block,
                note,
            } => {
                self.gate.rules = rules;
                self.gate.bypassed_agents = bypassed;
                let bound = agent_block.is_some();
                if let Some(block) = agent_block {
                    self.bind_to_block(block);
                }
                // Only this agent's own block counts: an agent with none does
                // not inherit the bypass of a block that shares its name.
                if let Some(me) = &self.session.settings_agent {
                    self.gate.agent_policy.bypass = self.gate.bypassed_agents.contains(me);
                }
                if let Some(note) = note {
                    self.info(note);
                }
                // Its block's rules (one just kept for it) apply now: what
                // they block is answered, what they allow waits for a yes.
                if bound {
                    return self.redecide_covered();
                }
                Vec::new()
            }
            Msg::SettingsWriteFailed(message) => {
                self.error(
                    format!("settings not written: {message}; the choice holds for this run"),
                    Vec::new(),
                );
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}
