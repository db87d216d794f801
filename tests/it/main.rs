//! End-to-end tests over real pipes with `warden demo-agent`, one test binary (one link) for all of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attack;
mod card_races;
mod common;
mod composer;
mod demo_agent;
mod demo_agent_client;
mod demo_agent_sessions;
mod e2e;
mod e2e_chats;
mod e2e_client;
mod faults;
mod fidelity_auth;
mod fidelity_controls;
mod fidelity_models;
mod fidelity_session;
mod fidelity_view;
mod focus;
mod gate_answers;
mod gate_commands;
mod gate_modes;
mod hostile_files;
mod hostile_output;
mod identity;
mod ingest;
mod iooff;
mod keys;
mod runtime;
mod settings;
mod transcript;
mod wire;
