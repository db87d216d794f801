//! End to end over real pipes: the models a session offers (`models` of
//! `session/new`), changed with `session/set_model`, and the usage agents
//! send (a prompt answer's `usage`, Claude's `usage_update` with `used:
//! null`), as recorded from real agents (issue 13).

use crate::common::*;
use warden::app::App;
use warden::model::{SessionOption, SessionOptionValue};
use warden::policy::Mode;
use warden::state::{Action, ModeItem};

fn menu_item(app: &App, option: &str, label: &str) -> usize {
    let state = app.state();
    state
        .mode_menu_items()
        .iter()
        .position(|item| match item {
            ModeItem::Option { option: o, choice } => {
                let opt = &state.session.controls.options[*o];
                opt.id == option
                    && match &opt.value {
                        SessionOptionValue::Select { choices, .. } => {
                            choices[*choice].name == label
                        }
                        SessionOptionValue::Boolean(_) => true,
                    }
            }
            _ => false,
        })
        .expect("the option is in the menu")
}

async fn claude(dir: &std::path::Path) -> App {
    started_scenario(
        dir,
        "claude-models-and-null-usage.toml",
        logged_options(dir, Mode::Default),
    )
    .await
}

/// Claude Code's `models` are the model picker and the footer's model;
/// picking one sends `session/set_model`, and the agent uses it.
#[tokio::test]
async fn session_models_are_picked_with_set_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = claude(dir.path()).await;
    pump_until(&mut app, "the models", |s| {
        !s.session.controls.options.is_empty()
    })
    .await;
    assert_eq!(
        app.state().session.controls.model_label().as_deref(),
        Some("Default (recommended)")
    );
    key(&mut app, Action::OpenModeMenu);
    let item = menu_item(&app, SessionOption::MODELS_ID, "Haiku");
    key(&mut app, Action::PickModeItem(item));
    pump_until(&mut app, "the model change", |s| {
        infos(s).iter().any(|l| l == "Model: Haiku")
    })
    .await;
    assert_eq!(
        app.state().session.controls.model_label().as_deref(),
        Some("Haiku")
    );
    send(&mut app, "which model");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    assert!(
        agent_text(app.state()).contains("model: haiku"),
        "{}",
        agent_text(app.state())
    );
    app.shutdown().await;
}

/// Claude's `usage_update` without `used` still gives the cost, and the
/// prompt answer's `usage` the turn's tokens.
#[tokio::test]
async fn null_used_and_prompt_usage_reach_the_footer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = claude(dir.path()).await;
    send(&mut app, "usage");
    pump_until(&mut app, "end of turn", |s| !s.is_busy()).await;
    pump_until(&mut app, "the usage", |s| {
        s.session
            .controls
            .usage
            .as_ref()
            .is_some_and(|u| u.cost.is_some())
    })
    .await;
    let usage = app.state().session.controls.usage.clone().expect("usage");
    assert_eq!(usage.used, None);
    assert_eq!(usage.size, Some(200_000));
    assert_eq!(usage.turn_tokens, Some(60));
    assert_eq!(
        app.state().session.controls.usage_label().as_deref(),
        Some("60 tok · <$0.01")
    );
    app.shutdown().await;
}

/// qwen-code offers the model as a config option and as `models`: one
/// picker, the config option's.
#[tokio::test]
async fn a_model_config_option_and_models_make_one_picker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = started_scenario(
        dir.path(),
        "qwen-model-option-and-models.toml",
        logged_options(dir.path(), Mode::Default),
    )
    .await;
    pump_until(&mut app, "the options", |s| {
        !s.session.controls.options.is_empty()
    })
    .await;
    let models: Vec<&str> = app
        .state()
        .session
        .controls
        .options
        .iter()
        .filter(|o| o.is_model())
        .map(|o| o.id.as_str())
        .collect();
    assert_eq!(models, vec!["model"]);
    app.shutdown().await;
}
