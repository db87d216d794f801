#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn sessions_track_modes_and_cancel_running_turns() {
    let sessions = Sessions::default();
    let id = SessionId::new("s1");
    assert!(sessions.start_turn(&id).is_none());
    sessions.create(&id, PathBuf::from("/work"));
    assert_eq!(sessions.cwd(&id), PathBuf::from("/work"));
    assert!(sessions.set_known_mode(&id, "auto").is_ok());
    assert!(sessions.set_known_mode(&id, "yolo").is_err());
    assert!(
        sessions
            .set_known_mode(&SessionId::new("s2"), "plan")
            .is_err()
    );
    let (turn, token) = sessions.start_turn(&id).unwrap();
    sessions.cancel(&SessionId::new("s2"));
    assert!(!token.is_cancelled());
    sessions.cancel(&id);
    assert!(token.is_cancelled());
    sessions.end_turn(&id, turn);
    assert_eq!(lock(&sessions.inner)[&id].turns.len(), 0);
    assert_eq!(lock(&sessions.inner)[&id].record.mode, "auto");
}

#[test]
fn client_instruction_is_skipped_for_scenario_choice() {
    assert_eq!(
        without_client_instruction("[warden: plan mode] plan only.\n\nedit it"),
        "edit it"
    );
    assert_eq!(without_client_instruction("edit [warden]"), "edit [warden]");
}

#[test]
fn prompt_text_joins_text_blocks() {
    let prompt = vec![ContentBlock::from("edit"), ContentBlock::from("now")];
    assert_eq!(prompt_text(&prompt), "edit\nnow");
}
