//! Attacks on the fast path: a line it reads differently from the SDK
//! (duplicate keys, a null id) would show text the SDK would refuse, or
//! send it to another session.

use super::*;

fn chunk(params: &str, extra: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"session/update"{extra},"params":{params}}}"#)
}

const PARAMS: &str = r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#;

#[test]
fn the_plain_chunk_takes_the_fast_path() {
    assert!(text_chunk(&chunk(PARAMS, "")).is_some());
}

#[test]
fn duplicate_keys_are_left_to_the_sdk() {
    for line in [
        chunk(
            r#"{"sessionId":"s","sessionId":"other","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}"#,
            "",
        ),
        chunk(
            r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","text":"b"}}}"#,
            "",
        ),
        chunk(PARAMS, r#","method":"session/request_permission""#),
        chunk(PARAMS, r#","params":{}"#),
    ] {
        assert!(text_chunk(&line).is_none(), "fast path took {line}");
    }
}

#[test]
fn a_message_with_an_id_is_never_a_notification() {
    for extra in [
        r#","id":1"#,
        r#","id":"x""#,
        r#","id":null"#,
        r#","result":null"#,
    ] {
        let line = chunk(PARAMS, extra);
        assert!(text_chunk(&line).is_none(), "fast path took {line}");
    }
}
