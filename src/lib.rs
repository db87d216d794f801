//! warden: a terminal chat client for ACP coding agents, with a permission gate.
#![deny(clippy::print_stdout)]

pub mod acp;
pub mod app;
pub mod chats;
pub mod client;
pub mod decision_log;
pub mod demo_agent;
pub mod editor;
pub mod export;
pub mod history;
pub mod keys;
pub mod launch;
pub mod mention;
pub mod model;
pub mod policy;
pub mod reaper;
pub mod record;
pub mod sanitize;
pub mod settings;
pub mod state;
#[cfg(test)]
pub(crate) mod test_support;
mod text;
pub mod tui;
pub mod ui;
