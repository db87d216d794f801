//! The gate's door in: a permission request or an elicitation from an
//! agent process. The chat that owns its session is found (none: a chat of
//! the same process refuses it, a `Refusal` among its facts); the
//! responder is parked by request id; a permission request's facts are
//! gathered off the loop on the file worker (`facts::permission`, the
//! gate's door to the disk), while the agent's later events wait so none
//! overtakes it, and come back as `Msg::PermissionChecked` for the chat's
//! gate (`crate::gate`). An elicitation names no path: it goes to the gate
//! at once.

use super::App;
use super::agents::Hold;
use crate::acp::{ElicitationResponder, PermissionResponder};
use crate::model::{PermissionOutcome, PermissionRequest};
use crate::state::{Msg, Refusal};

impl App {
    /// `session/request_permission`: parked, its facts gathered off the loop.
    pub(super) fn on_permission_ask(
        &mut self,
        key: u64,
        mut request: PermissionRequest,
        responder: PermissionResponder,
    ) {
        let (id, refusal) = match self.chat_of(key, &request.session_id) {
            Some(id) => (id, None),
            // A session no chat has open (a closed chat's, a made-up
            // one): the gate of a chat on the same process refuses
            // it, says so and logs it.
            None => match self.chats_on(key).first() {
                Some(first) => (*first, Some(Refusal::foreign_session(&request.session_id))),
                None => {
                    tracing::warn!(session = %request.session_id, "permission request for an unknown session: cancelled");
                    return responder.respond(PermissionOutcome::Cancelled);
                }
            },
        };
        let Some(chat) = self.chats.get_mut(&id) else {
            return responder.respond(PermissionOutcome::Cancelled);
        };
        // Facts only (the view, resolved paths, warden's own files),
        // gathered off the loop in the file worker, in turn with the
        // client calls: the gate decides and logs.
        let known = self.ws.chat(id).map(|slot| {
            let state = &slot.state;
            let known = state
                .session
                .transcript
                .tool(&request.tool_call_id)
                .map(|t| t.call.clone());
            (
                known,
                state.gate.home.clone(),
                state.session.cwd_path.clone(),
            )
        });
        let request_id = chat.next_request;
        chat.next_request += 1;
        chat.responders.insert(request_id, responder);
        let roots = chat.roots.clone();
        let hold = Hold {
            key,
            inbox: Some(self.inbox_tx.clone()),
        };
        chat.jobs.push(Box::new(move || {
            let mut hold = hold;
            let mut facts = match known {
                Some((known, home, cwd)) => {
                    super::facts::permission(&mut request, known, home.as_deref(), &cwd, &roots)
                }
                None => crate::state::RequestFacts::of(&request, None),
            };
            if refusal.is_some() {
                facts.refusal = refusal;
            }
            // The step itself releases the agent's events.
            hold.inbox = None;
            super::calls::FsStep::Checked {
                key,
                id: request_id,
                request: Box::new(request),
                facts: Box::new(facts),
            }
        }));
        self.hold_events(key);
    }

    /// `elicitation/create`: parked, and to the chat's gate at once.
    pub(super) fn on_elicitation_ask(
        &mut self,
        key: u64,
        request: Box<PermissionRequest>,
        responder: ElicitationResponder,
    ) {
        // A session no chat has open: refused, said and logged in a
        // chat of the same process, as any request.
        let (id, refusal) = match self.chat_of(key, &request.session_id) {
            Some(id) => (id, None),
            None => match self.chats_on(key).first() {
                Some(first) => (*first, Some(Refusal::foreign_session(&request.session_id))),
                None => {
                    tracing::warn!(session = %request.session_id, "elicitation for an unknown session: cancelled");
                    return responder.respond(&PermissionOutcome::Cancelled);
                }
            },
        };
        let Some(chat) = self.chats.get_mut(&id) else {
            return responder.respond(&PermissionOutcome::Cancelled);
        };
        let request_id = chat.next_request;
        chat.next_request += 1;
        chat.elicitations.insert(request_id, responder);
        let msg = match refusal {
            Some(refusal) => Msg::PermissionChecked {
                id: request_id,
                facts: Box::new(crate::state::RequestFacts {
                    refusal: Some(refusal),
                    in_session: true,
                    ..crate::state::RequestFacts::of(&request, None)
                }),
                request,
            },
            None => Msg::PermissionRequested {
                id: request_id,
                request,
            },
        };
        self.send_chat(id, msg);
    }
}
