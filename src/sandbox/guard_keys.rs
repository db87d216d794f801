//! The keys of an agent's JSON settings that make it run a program later
//! (`agents::CODE_KEYS`: `mcpServers` at the top of `~/.claude.json` and in
//! each of its projects, hooks), in a file the agent rewrites all the time
//! for its own bookkeeping: only those keys are put back, the rest of what
//! it wrote stays.

use serde_json::Value;

/// A code key's place in the document (the object keys down to it) and
/// its value.
pub type Keyed = Vec<(Vec<String>, Value)>;

/// Every code key of `doc`, at any depth (not looking inside one).
pub fn code_keys(doc: &Value) -> Keyed {
    let mut out = Vec::new();
    walk(doc, &mut Vec::new(), &mut out);
    out
}

fn walk(value: &Value, at: &mut Vec<String>, out: &mut Keyed) {
    let Some(map) = value.as_object() else {
        return;
    };
    for (key, child) in map {
        at.push(key.clone());
        if crate::agents::CODE_KEYS.contains(&key.as_str()) {
            out.push((at.clone(), child.clone()));
        } else {
            walk(child, at, out);
        }
        at.pop();
    }
}

/// `now` with its code keys as `before` has them: every code key removed,
/// then `before`'s put back at their places (the objects on the way made
/// again where the agent removed them).
pub fn put_back(now: &Value, before: &Keyed) -> Value {
    let mut doc = now.clone();
    strip(&mut doc);
    if !doc.is_object() {
        doc = Value::Object(serde_json::Map::new());
    }
    for (path, value) in before {
        set(&mut doc, path, value);
    }
    doc
}

/// Set `value` at `path` in `doc`, making objects on the way.
fn set(doc: &mut Value, path: &[String], value: &Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if !doc.is_object() {
        *doc = Value::Object(serde_json::Map::new());
    }
    let Some(map) = doc.as_object_mut() else {
        return;
    };
    if rest.is_empty() {
        map.insert(first.clone(), value.clone());
        return;
    }
    let next = map
        .entry(first.clone())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    set(next, rest, value);
}

fn strip(value: &mut Value) {
    if let Some(map) = value.as_object_mut() {
        map.retain(|key, _| !crate::agents::CODE_KEYS.contains(&key.as_str()));
        for child in map.values_mut() {
            strip(child);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_keys_that_run_programs_go_back() {
        let before = json!({
            "numStartups": 3,
            "mcpServers": {"mine": {"command": "my-server"}},
            "projects": {"/w": {"allowedTools": [], "mcpServers": {}}}
        });
        let keyed = code_keys(&before);
        assert_eq!(keyed.len(), 2);
        let now = json!({
            "numStartups": 4,
            "tipsHistory": {"x": 1},
            "mcpServers": {"mine": {"command": "my-server"}, "evil": {"command": "sh"}},
            "projects": {
                "/w": {"allowedTools": ["Bash"], "mcpServers": {"evil": {"command": "sh"}}},
                "/other": {"mcpServers": {"evil": {"command": "sh"}}, "lastCost": 1},
            },
            "hooks": {"Stop": [{"command": "sh"}]}
        });
        let want = json!({
            "numStartups": 4,
            "tipsHistory": {"x": 1},
            "mcpServers": {"mine": {"command": "my-server"}},
            "projects": {
                "/w": {"allowedTools": ["Bash"], "mcpServers": {}},
                "/other": {"lastCost": 1},
            }
        });
        assert_eq!(put_back(&now, &keyed), want);
        // Its projects removed: made again to hold the user's servers.
        let gone = json!({"numStartups": 5});
        let back = put_back(&gone, &keyed);
        assert_eq!(back["projects"]["/w"]["mcpServers"], json!({}));
        assert_eq!(back["mcpServers"]["mine"]["command"], "my-server");
        // Nothing the agent changed of them: nothing changes.
        assert_eq!(put_back(&before, &keyed), before);
    }
}
