//! The network gate's side in the app (issue 35): a stub until the
//! gate's network card lands (the lead's branch replaces this file).

use super::App;
use crate::net::ConnectAsk;

impl App {
    /// A connection the agent's proxy asks about: refused (its reply
    /// dropped) until the gate's network card lands.
    pub(super) fn on_connect_ask(&mut self, _key: u64, ask: ConnectAsk) {
        drop(ask)
    }
}
