//! The fast path for the message an agent sends by the thousand: a text
//! chunk of `session/update` (`agent_message_chunk`, `agent_thought_chunk`,
//! `user_message_chunk` with a text block).
//!
//! The line reader ([`super::lines`]) asks [`Incoming::route`] about every
//! line. A text chunk is parsed from the line straight into warden's own
//! update (what `convert::session_update` makes of the schema's chunk),
//! and sent as an [`AgentEvent::Update`] on the events channel, skipping the
//! SDK's dispatch (a JSON value per message, its typed re-parse, a clone of
//! the connection per handler call). Everything else goes to the SDK as it
//! came: requests, responses, other updates, and any chunk the narrow
//! parser here refuses (another content block, a `messageId` that is not a
//! string, a duplicated member, a `jsonrpc` other than `"2.0"`, an `id`,
//! ...), which the SDK then handles or reports as it always did.
//!
//! Order: a chunk read after a line the SDK has not finished with must not
//! overtake it (a permission request, a tool call, the answer to
//! `session/new`). So after such a line the next chunk is held, and a
//! *fence* goes to the SDK behind that line: a `_warden/fence`
//! notification naming this connection's random token and a sequence
//! number. The SDK dispatches in order, so when [`Fences`] (its handler)
//! sees the fence, everything before it has been handled, and the held
//! chunk is sent. A chunk read before an SDK line is sent before that line
//! is even handed over, so it never comes after it (a prompt's answer never
//! overtakes the last chunks of its turn).
//!
//! Before `initialize` is answered the SDK refuses notifications; so does
//! the fast path: it starts once the answer to warden's `initialize` (seen
//! going out by [`FastPath::outgoing`]) has been handed to the SDK.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::{Agent, ConnectionTo, Dispatch, HandleDispatchFrom, Handled};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::sync::watch;

use super::{AgentEvent, Events};
use crate::model::SessionUpdate;

/// The method of a fence notification (warden's own; never sent to the agent).
const FENCE_METHOD: &str = "_warden/fence";

/// The fast path of one connection, shared by its line reader, its line
/// writer and its fence handler.
#[derive(Clone)]
pub(super) struct FastPath(Arc<Shared>);

struct Shared {
    events: Events,
    /// Names this connection's fences, so that the agent cannot pass one.
    token: String,
    /// The id of warden's `initialize` request, once it went out.
    initialize: Mutex<Option<Value>>,
    /// The answer to `initialize` has been handed to the SDK.
    ready: AtomicBool,
    /// The highest fence the SDK has dispatched.
    passed: watch::Sender<u64>,
}

impl FastPath {
    /// A fast path sending its updates on `events`.
    pub(super) fn new(events: Events) -> Self {
        FastPath(Arc::new(Shared {
            events,
            token: uuid::Uuid::new_v4().simple().to_string(),
            initialize: Mutex::new(None),
            ready: AtomicBool::new(false),
            passed: watch::Sender::new(0),
        }))
    }

    /// The reader's half.
    pub(super) fn incoming(&self) -> Incoming {
        Incoming {
            passed: self.0.passed.subscribe(),
            fast: self.clone(),
            unfenced: false,
            fences: 0,
            held: None,
        }
    }

    /// The SDK handler that lets held chunks go.
    pub(super) fn fences(&self) -> Fences {
        Fences(self.clone())
    }

    /// Watch a line warden sends: the id of its `initialize` request is kept
    /// (the fast path starts with the answer to it).
    pub(super) fn outgoing(&self, line: &str) {
        if self.0.ready.load(Ordering::Acquire) {
            return;
        }
        let mut initialize = self
            .0
            .initialize
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if initialize.is_some() {
            return;
        }
        if let Ok(Probe {
            method: Member(Some(method)),
            id: Member(Some(id)),
            ..
        }) = serde_json::from_str::<Probe>(line)
            && method == "initialize"
        {
            *initialize = Some(id);
        }
    }

    /// A fence notification's params: the fence passed, when it is one of
    /// ours (an agent's imitation of one is dropped).
    fn pass(&self, params: &Value) {
        let Ok(fence) = Fence::deserialize(params) else {
            return;
        };
        if fence.token != self.0.token {
            return;
        }
        self.0.passed.send_if_modified(|passed| {
            let later = fence.seq > *passed;
            if later {
                *passed = fence.seq;
            }
            later
        });
    }

    /// Whether `line` answers warden's `initialize` with a result.
    fn answers_initialize(&self, line: &str) -> bool {
        let initialize = self
            .0
            .initialize
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(sent) = initialize.as_ref() else {
            return false;
        };
        matches!(
            serde_json::from_str::<Probe>(line),
            Ok(Probe {
                method: Member(None),
                id: Member(Some(id)),
                result: Member(Some(_)),
                ..
            }) if &id == sent
        )
    }
}

/// Where a line goes.
#[derive(Debug, PartialEq)]
pub(super) enum Route {
    /// To the SDK, as it came.
    Sdk,
    /// Sent on the fast path already.
    Sent,
    /// A chunk is held until the SDK has handled what came before it: hand
    /// the SDK this fence line, then call [`Incoming::release`].
    Fence(String),
}

/// The line reader's side of the fast path.
pub(super) struct Incoming {
    fast: FastPath,
    passed: watch::Receiver<u64>,
    /// A line went to the SDK since the last fence.
    unfenced: bool,
    /// Fences sent.
    fences: u64,
    /// A chunk waiting for fence `.0`.
    held: Option<(u64, AgentEvent)>,
}

impl Incoming {
    /// Decide about one line of the agent's output (a JSON object or array).
    pub(super) fn route(&mut self, line: &str) -> Route {
        let shared = &self.fast.0;
        if !shared.ready.load(Ordering::Acquire) {
            if self.fast.answers_initialize(line) {
                shared.ready.store(true, Ordering::Release);
                self.unfenced = true;
            }
            return Route::Sdk;
        }
        let Some(event) = text_chunk(line) else {
            self.unfenced = true;
            return Route::Sdk;
        };
        if self.unfenced {
            self.unfenced = false;
            self.fences += 1;
            self.held = Some((self.fences, event));
            return Route::Fence(fence_line(&shared.token, self.fences));
        }
        let _ = shared.events.send(event);
        Route::Sent
    }

    /// Send the held chunk once the SDK has dispatched its fence.
    pub(super) async fn release(&mut self) {
        let Some((fence, event)) = self.held.take() else {
            return;
        };
        // The sender lives in `self.fast`; it cannot close while we wait.
        let _ = self.passed.wait_for(|passed| *passed >= fence).await;
        let _ = self.fast.0.events.send(event);
    }
}

fn fence_line(token: &str, seq: u64) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "method": FENCE_METHOD,
        "params": {"token": token, "seq": seq},
    })
    .to_string()
}

/// The SDK handler of fence notifications: marks each as passed.
pub(super) struct Fences(FastPath);

#[derive(Deserialize)]
struct Fence {
    token: String,
    seq: u64,
}

impl HandleDispatchFrom<Agent> for Fences {
    async fn handle_dispatch_from(
        &mut self,
        message: Dispatch,
        _connection: ConnectionTo<Agent>,
    ) -> Result<Handled<Dispatch>, agent_client_protocol::Error> {
        let Dispatch::Notification(note) = &message else {
            return Ok(Handled::No {
                message,
                retry: false,
            });
        };
        if note.method() != FENCE_METHOD {
            return Ok(Handled::No {
                message,
                retry: false,
            });
        }
        self.0.pass(note.params());
        Ok(Handled::Yes)
    }

    fn describe_chain(&self) -> impl std::fmt::Debug {
        "warden fences"
    }
}

/// A member that may be present with any value, `null` included.
struct Member<T>(Option<T>);

impl<T> Default for Member<T> {
    fn default() -> Self {
        Member(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Member<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|value| Member(Some(value)))
    }
}

/// A `T` read only from a JSON object: serde's derived structs also take
/// an array of their fields in order, which the schema's types (and so the
/// SDK) refuse for a content block.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Fields(std::marker::PhantomData))
            .map(Object)
    }
}

/// Enough of a JSON-RPC message to tell requests, answers and notifications apart.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    method: Member<String>,
    #[serde(default)]
    id: Member<Value>,
    #[serde(default)]
    result: Member<IgnoredAny>,
}

/// A `session/update` notification carrying a text chunk, as sent.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Member<&'a str>,
    #[serde(default, borrow)]
    method: Member<&'a str>,
    #[serde(default)]
    id: Member<IgnoredAny>,
    #[serde(default)]
    result: Member<IgnoredAny>,
    #[serde(default)]
    error: Member<IgnoredAny>,
    #[serde(default, borrow)]
    params: Member<Object<Params<'a>>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "sessionId")]
    session_id: String,
    #[serde(borrow)]
    update: Object<Chunk<'a>>,
}

/// `ContentChunk` with a text block; `annotations` and `_meta` are
/// ignored, as the schema's own types do when they do not parse.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(rename = "sessionUpdate", borrow)]
    kind: &'a str,
    #[serde(borrow)]
    content: Object<Text<'a>>,
    #[serde(rename = "messageId", default)]
    message_id: Option<String>,
}

#[derive(Deserialize)]
struct Text<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    text: String,
}

/// The update event of `line` when it is a `session/update` notification
/// carrying a text chunk in the shape the SDK reads the same way; `None`
/// for anything else (the SDK's to handle).
pub(super) fn text_chunk(line: &str) -> Option<AgentEvent> {
    let Object(envelope) = serde_json::from_str::<Object<Envelope>>(line).ok()?;
    let Envelope {
        jsonrpc: Member(Some("2.0")),
        method: Member(Some("session/update")),
        id: Member(None),
        result: Member(None),
        error: Member(None),
        params: Member(Some(Object(params))),
    } = envelope
    else {
        return None;
    };
    let Params {
        session_id,
        update: Object(update),
    } = params;
    let Object(content) = update.content;
    if content.kind != "text" {
        return None;
    }
    let text = content.text;
    // What `convert::session_update` makes of the schema's chunk (the
    // tests hold the two to the same answers), without building it.
    let update = match (update.kind, update.message_id) {
        ("agent_message_chunk", None) => SessionUpdate::AgentChunk(text),
        ("agent_thought_chunk", None) => SessionUpdate::ThoughtChunk(text),
        ("agent_message_chunk", Some(message_id)) => SessionUpdate::MessageChunk {
            message_id,
            text,
            thought: false,
        },
        ("agent_thought_chunk", Some(message_id)) => SessionUpdate::MessageChunk {
            message_id,
            text,
            thought: true,
        },
        ("user_message_chunk", _) => SessionUpdate::UserChunk(text),
        _ => return None,
    };
    Some(AgentEvent::Update { session_id, update })
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "fast_attack_tests.rs"]
mod attack_tests;
