//! The key tables: per context, its bindings (key, label, help, hint,
//! command), a file per place: the composer and the chats
//! (`composer.rs`), a card and what opens under it (`card.rs`), the lists
//! (`lists.rs`). The types and the rendering are in [`crate::keys`]; a
//! card's choices are its own table (`state::CHOICES`).

use super::{Binding, Hint, Key};

mod card;
mod composer;
mod lists;

pub(crate) use card::*;
pub(crate) use composer::*;
pub(crate) use lists::*;

const fn b<C>(
    keys: &'static [Key],
    label: &'static str,
    help: &'static str,
    hint: Hint,
    cmd: C,
) -> Binding<C> {
    Binding {
        keys,
        label,
        help,
        hint,
        cmd,
    }
}
