//! warden: a terminal chat client for ACP coding agents, with a permission gate.
#![deny(clippy::print_stdout)]
// The library serves warden's own binary, tests and benches; its docs are
// for developers, built with `--document-private-items` (`.ci/run`), so a
// public item may link to a crate-private one.
#![allow(rustdoc::private_intra_doc_links)]

pub mod acp;
pub mod agents;
pub mod app;
pub mod chats;
pub mod checkpoint;
pub mod client;
pub(crate) mod confusable;
pub mod decision_log;
pub mod demo_agent;
pub mod editor;
pub mod export;
pub mod gate;
pub(crate) mod history;
pub(crate) mod keys;
pub mod launch;
pub mod mention;
pub mod model;
pub mod net;
pub(crate) mod own_path;
pub mod policy;
pub(crate) mod procs;
pub mod reaper;
pub(crate) mod record;
pub mod remote;
pub mod sandbox;
pub mod sanitize;
pub mod settings;
pub mod state;
#[cfg(test)]
pub(crate) mod test_support;
mod text;
pub mod tui;
pub mod ui;
