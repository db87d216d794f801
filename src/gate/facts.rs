//! What the runtime finds out about a request before the gate decides:
//! facts, never a decision. The runtime gathers them off the UI loop (the
//! file worker resolves paths and finds warden's own files); the gate
//! decides with them ([`super::on_request`]) and logs.

use crate::model::{PermissionRequest, ToolCall};
use crate::policy::RequestView;
use crate::record::Answerer;

/// What the runtime found out about a request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestFacts {
    /// The request as the policy sees it ([`view`]: built once, with the
    /// paths it names resolved among its locations).
    pub view: RequestView,
    /// Each path the request names (normalised) with every file it can
    /// mean (the kernel's reading, a tool's that applies `..` first).
    pub readings: Vec<(String, Vec<String>)>,
    /// Why warden refuses it whatever the mode, if it must.
    pub refusal: Option<Refusal>,
    /// The agent sent it for this chat's session (a permission request, a
    /// file or terminal call), which must have a turn running: the chat's
    /// mode decides only what the agent does in the chat's own turn.
    pub in_session: bool,
}

impl RequestFacts {
    /// The facts of a request the runtime found nothing more about: its
    /// view merged with the tool call known under its id.
    pub fn of(request: &PermissionRequest, known: Option<&ToolCall>) -> RequestFacts {
        RequestFacts {
            view: view(request, known),
            ..RequestFacts::default()
        }
    }

    /// The same facts, with a refusal whatever the mode.
    pub fn refused(mut self, refusal: Refusal) -> RequestFacts {
        self.refusal = Some(refusal);
        self
    }
}

/// The one place a request's view is built: the request merged with the
/// tool call known under its id (`None` for warden's own requests).
pub fn view(request: &PermissionRequest, known: Option<&ToolCall>) -> RequestView {
    RequestView::from_request(request, known)
}

/// Why warden refuses a request whatever the mode and the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It touches one of warden's own files (logged as `protected`).
    Protected(String),
    /// Another reason of safety (logged as `safety`): no turn running in
    /// the session, a session no chat has open, a path outside the roots
    /// or one that changed under warden.
    Safety(String),
}

impl Refusal {
    /// Why, for the chat and the log.
    pub fn why(&self) -> &str {
        match self {
            Refusal::Protected(why) | Refusal::Safety(why) => why,
        }
    }

    /// Who the log says answered.
    pub fn answerer(&self) -> Answerer {
        match self {
            Refusal::Protected(_) => Answerer::Protected,
            Refusal::Safety(_) => Answerer::Safety,
        }
    }

    /// A request naming a session no chat has open (a closed chat's, a
    /// made-up one).
    pub fn foreign_session(session: &str) -> Refusal {
        Refusal::Safety(format!(
            "it names session {}, which no chat has open",
            crate::sanitize::one_line(session)
        ))
    }
}
