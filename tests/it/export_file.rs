//! `/export` with no name, end to end: the file is named by the chat (its
//! title and the id `warden --resume` takes), lands in warden's exports
//! folder and never in the user's repository, and reads as a conversation:
//! one heading per message, decisions as sentences, no key hints.

use warden::app::ChatOptions;
use warden::state::{Action, ChatState};

use crate::common::*;

fn idle(s: &ChatState) -> bool {
    !s.is_busy()
}

#[tokio::test]
async fn slash_export_names_the_file_by_the_chat_and_keeps_it_out_of_the_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let options = ChatOptions {
        chats_dir: Some(tmp.path().join("data/warden/chats")),
        ..ChatOptions::default()
    };
    let mut app = started_with(&repo, options).await;
    send(&mut app, "edit");
    pump_until(&mut app, "a card", |s| !s.gate.approvals.is_empty()).await;
    key(&mut app, Action::ch('1'));
    pump_until(&mut app, "end of turn", idle).await;
    send(&mut app, "hello there");
    pump_until(&mut app, "end of turn", idle).await;
    app.settle_disk().await;
    send(&mut app, "/export");
    pump_until(&mut app, "the export", |s| {
        infos(s).iter().any(|i| i.contains("exported the chat to")) || !errors(s).is_empty()
    })
    .await;
    assert_eq!(errors(app.state()), Vec::new());

    // Nothing new in the repository.
    let in_repo: Vec<_> = std::fs::read_dir(&repo)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    assert_eq!(in_repo, Vec::<String>::new());

    // One file in the exports folder, named by the title and the resume id.
    let hints = app.resume_hints();
    let id = hints[0].rsplit(' ').next().unwrap().to_string();
    let exports = tmp.path().join("data/warden/exports");
    let names: Vec<String> = std::fs::read_dir(&exports)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].ends_with(&format!("-{id}.md")),
        "{names:?} vs {id}"
    );
    let path = exports.join(&names[0]);
    assert!(
        infos(app.state())
            .iter()
            .any(|i| i.contains(&path.display().to_string())),
        "the chat says where: {:?}",
        infos(app.state())
    );

    let text = std::fs::read_to_string(&path).unwrap();
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        vec!["## You", "## Agent", "## You", "## Agent"],
        "{text}"
    );
    assert!(text.contains("**You allowed:**"), "{text}");
    assert!(!text.contains("allowed: allowed"), "{text}");
    assert!(!text.contains("Alt-") && !text.contains("Ctrl-"), "{text}");
    app.shutdown().await;
}
