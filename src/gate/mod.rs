//! The permission gate: one room for the pipeline facts → decide → card →
//! answer. The runtime gathers a request's [`facts`] off the UI loop; the
//! gate decides it in one place ([`on_request`]); the state shows what is
//! left as a card of one of the [`kinds`] and carries the answer out. The
//! policy (`crate::policy`) is the pure leaf it decides with.

pub mod answer;
pub mod arming;
pub mod card_keys;
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
