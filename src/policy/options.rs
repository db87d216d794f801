//! Which of the agent's permission options answers a decision or a pick:
//! its plain `allow_once` and reject, lasting options, and what is sent for a
//! card's choice ([`sent_for`]).

use super::*;

/// The option an automatic allow answers with: the agent's `allow_once`,
/// never `allow_always` (the agent might stop asking). `None` when the agent
/// offers no `allow_once`: the request becomes a card.
pub(crate) fn allow_option(options: &[PermissionOption]) -> Option<&PermissionOption> {
    options.iter().find(|o| plain_once(options, o))
}

/// An `allow_once` that is what it says: its id is its own, and neither
/// its name nor its id speaks of a lasting allow.
fn plain_once(options: &[PermissionOption], option: &PermissionOption) -> bool {
    option.kind == OptionKind::AllowOnce && unique_id(options, option) && !says_lasting(option)
}

/// Whether an option allows more than this call, by its kind
/// (`allow_always`) or by its words: an `allow_once` named "Always allow",
/// "don't ask again", "for this session", ... may be taken so by the agent
/// (or by the user), so warden treats it as an "always".
pub(crate) fn lasting(option: &PermissionOption) -> bool {
    option.kind == OptionKind::AllowAlways
        || (option.kind == OptionKind::AllowOnce && says_lasting(option))
}

fn says_lasting(option: &PermissionOption) -> bool {
    const WORDS: &[&str] = &[
        "always",
        "don't ask",
        "don\u{2019}t ask",
        "dont ask",
        "do not ask",
        "never ask",
        "stop asking",
        "session",
        "bypass",
        "auto-accept",
        "auto accept",
        "from now on",
        "remember",
        "forever",
        "permanent",
    ];
    let text = format!("{} {}", option.name, option.id)
        .to_lowercase()
        .replace('_', " ");
    WORDS.iter().any(|w| text.contains(w))
}

/// Whether no other option shares this option's id (the agent would read an
/// answer by id, and might take the other one).
fn unique_id(options: &[PermissionOption], option: &PermissionOption) -> bool {
    options.iter().filter(|o| o.id == option.id).count() == 1
}

/// The option an automatic deny answers with: `reject_once`, else `reject_always`.
/// A reject whose id another option shares is never sent (the agent might
/// read it as an allow): `None`, and the request is answered `cancelled`.
pub(crate) fn reject_option(options: &[PermissionOption]) -> Option<&PermissionOption> {
    let unique = |kind| {
        options
            .iter()
            .find(|o| o.kind == kind && unique_id(options, o))
    };
    unique(OptionKind::RejectOnce).or_else(|| unique(OptionKind::RejectAlways))
}

/// What warden really sends when the user picks one of the agent's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Send the option at this index. `always`: the user picked an "always"
    /// option and warden answers `allow_once` instead, keeping the "always"
    /// as its own grant for this chat.
    Option { index: usize, always: bool },
    /// The agent offers no `allow_once`: only this `allow_always`, which may
    /// make it stop asking for this tool. Sent only when picked explicitly.
    OnlyAlways(usize),
    /// A `switch_mode` option to a mode that does not ask (or that warden
    /// cannot tell asks), and no allow option leads to one that does:
    /// nothing is sent.
    Refused,
    /// A reject whose id another option shares, and no reject of its own
    /// on offer: the `cancelled` outcome is sent instead.
    Cancel,
}

/// What to send for the agent's option `picked` (see [`Sent`]): an
/// `allow_once` as is; an `allow_always` as the agent's `allow_once` (with a
/// chat grant); a `reject_always` as `reject_once` when offered. For a
/// `switch_mode` request, every allow becomes the allow option that leads to
/// a mode that asks ([`switch_allow_option`]). `None` when there is no such option.
pub(crate) fn sent_for(req: &RequestView, picked: usize, modes: &[AgentMode]) -> Option<Sent> {
    let options = &req.options;
    let option = options.get(picked)?;
    let index_of = |o: &PermissionOption| options.iter().position(|x| x == o);
    if !option.kind.is_allow() {
        let once = (option.kind == OptionKind::RejectAlways || !unique_id(options, option))
            .then(|| reject_option(options).and_then(index_of))
            .flatten();
        return Some(match once {
            Some(index) => Sent::Option {
                index,
                always: false,
            },
            None if unique_id(options, option) => Sent::Option {
                index: picked,
                always: false,
            },
            None => Sent::Cancel,
        });
    }
    if req.card == crate::gate::CardKind::ModeSwitch {
        return Some(match switch_allow_option(options, modes) {
            Some(index) => Sent::Option {
                index,
                always: false,
            },
            None => Sent::Refused,
        });
    }
    Some(match option.kind {
        _ if lasting(option) => match allow_option(options).and_then(index_of) {
            Some(index) => Sent::Option {
                index,
                always: true,
            },
            None => Sent::OnlyAlways(picked),
        },
        _ if unique_id(options, option) => Sent::Option {
            index: picked,
            always: false,
        },
        // An `allow_once` sharing its id with another option: the agent
        // might read the answer as the other one.
        _ => match allow_option(options).and_then(index_of) {
            Some(index) => Sent::Option {
                index,
                always: false,
            },
            None => Sent::OnlyAlways(picked),
        },
    })
}

/// The option that allows a `switch_mode` request and keeps the agent
/// asking: an `allow_once` whose id, name or mode description (from the
/// agent's `modes`) says the mode it leads to asks, and whose name does not
/// say otherwise. Options leading to modes that never ask, or that warden
/// cannot classify, are never chosen.
pub(crate) fn switch_allow_option(
    options: &[PermissionOption],
    modes: &[AgentMode],
) -> Option<usize> {
    options.iter().position(|o| {
        let description = modes
            .iter()
            .find(|m| m.id == o.id)
            .and_then(|m| m.description.as_deref());
        o.kind == OptionKind::AllowOnce
            && unique_id(options, o)
            && agent_mode::classify(&o.id, &o.name, description) == agent_mode::ModeAsks::Asks
            && agent_mode::classify("", "", Some(&o.name)) != agent_mode::ModeAsks::NeverAsks
    })
}
