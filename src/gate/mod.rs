//! The permission gate (issue 34 gathers it here): what kinds of card it
//! shows and what each offers ([`kinds`]). The policy (`crate::policy`) is
//! the pure leaf it decides with; the state keeps the cards.

pub mod kinds;

pub use kinds::CardKind;
