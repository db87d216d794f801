//! End-to-end tests over real pipes with `warden demo-agent`, one test binary (one link) for all of them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attack;
mod common;
mod demo_agent;
mod e2e;
mod faults;
mod fidelity_controls;
mod fidelity_session;
mod fidelity_view;
mod gate_answers;
mod gate_commands;
mod gate_modes;
mod hostile_files;
mod hostile_output;
mod identity;
mod ingest;
mod settings;
