//! The permission gate: one room for the whole pipeline, facts → decide →
//! card → answer. A request's walk through it, in six files:
//!
//! 1. [`facts`]: what the runtime found out about the request (its view,
//!    built once; the paths it names resolved; a refusal for safety).
//! 2. [`decide`]: [`on_request`], the one decision, with the policy
//!    (`crate::policy`) as its pure leaf.
//! 3. [`cards`]: the [`Outcome`] carried out: an answer, or a card of one
//!    of the [`kinds`] in the chat's queue.
//! 4. [`choices`]: the one table of a card's rows (key, label, what is sent).
//! 5. [`card_keys`]: a key on a card becomes a [`answer::Pick`] (the remote
//!    page's row id and `--on-ask`, [`on_ask`], become one too).
//! 6. [`answer`]: a `Pick` becomes what is sent to the agent and its
//!    decision record, as effects the runtime carries out.
//!
//! Beside the walk: [`kinds`] (what each kind of card does differently),
//! [`arming`] (when a card may take an answer), [`scope`] (what an allowed
//! request covers later in its turn), [`summary`] (the cards as the remote
//! page shows them). The gate is pure: the runtime (`crate::app`) gathers
//! the facts off the UI loop and answers the agent.

pub mod answer;
pub mod arming;
pub mod card_keys;
pub mod cards;
pub mod chat;
pub mod choices;
pub mod decide;
pub mod facts;
pub mod kinds;
pub mod on_ask;
pub mod scope;
pub mod summary;

pub use decide::{Ctx, Outcome, on_request};
pub use facts::{Refusal, RequestFacts};
pub use kinds::CardKind;

#[cfg(test)]
mod attack_tests;
#[cfg(test)]
mod turn_tests;
