//! The second attacker pass, end to end: what a hostile agent tries with
//! its own IO against the sandbox (each test also runs with the sandbox off,
//! which shows it can fail).

use warden::policy::Mode;
use warden::sandbox::SandboxMode;

use crate::sandbox::{both_ways, contains, landlock, profile, rig, turn};

#[tokio::test]
async fn a_symlink_in_the_workspace_does_not_carry_a_write_to_bashrc() {
    if !landlock() {
        return;
    }
    let rig = rig();
    both_ways(&rig, Mode::Auto, "own-link", |rig| {
        contains(&rig.home.join(".bashrc"), "demo-agent was here")
    })
    .await;
}

#[tokio::test]
async fn no_writable_descriptor_leaks_into_the_agent() {
    let rig = rig();
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::Off] {
        if mode != SandboxMode::Off && !landlock() {
            continue;
        }
        let said = turn(&rig, profile(&rig, mode), Mode::Auto, "own-fds").await;
        assert!(said.contains("own-fds: ok: writable: ["), "{said}");
        let list = said
            .split("writable: [")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .unwrap_or_default()
            .to_string();
        println!("{mode:?}: {list}");
        for fd in list.split(", ").filter(|f| !f.is_empty()) {
            assert!(
                !fd.contains("-> /") && !fd.contains("pipe:") && !fd.contains("socket:"),
                "{mode:?}: the agent holds {fd}"
            );
        }
    }
}
