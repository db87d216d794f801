//! What the runtime finds out about a request before the gate decides:
//! facts, never a decision (the first step of the walk). [`gather`] builds
//! an agent's request's facts: its view, every path it names with all it
//! can mean, a refusal when one is warden's own file. What the disk says of
//! a path is asked of the runtime, which runs [`gather`] off the UI loop on
//! its file worker (`app/facts.rs`, the one door to the disk); the gate
//! decides with the facts ([`super::on_request`]) and logs.

use std::path::{Path, PathBuf};

use crate::model::{Location, PermissionRequest, ToolCall};
use crate::policy::{self, Category, RequestView};
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

/// What the disk says of one path a request names, as the runtime reads
/// it (`app/facts.rs`: symlinks, `..`, `/proc` magic links followed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PathReading {
    /// The path with `.` and `..` applied as written.
    pub normalized: PathBuf,
    /// Every file the path can mean (the kernel's reading, a tool's that
    /// applies `..` first), each with why it is one of warden's own files
    /// for this access, if it is.
    pub meant: Vec<(PathBuf, Option<String>)>,
}

/// Gather the facts the gate needs about a permission request from the
/// agent: its view (built once, here), and each path it names as the IO
/// would resolve it, which `read` tells (the path with `~` taken as the
/// chat's `home` and a relative one from its `cwd`; `true` when the
/// request may write). Each reading that differs is added to the request's
/// locations (the card shows it) and the view's (the policy matches its
/// rules on the path as sent and as resolved: deny and ask when either
/// matches, allow only when all do).
///
/// A path that (as sent or resolved) is one of warden's own files is a
/// [`Refusal::Protected`]: the gate refuses the request whatever the mode
/// and logs it. Nothing is decided here.
pub fn gather(
    request: &mut PermissionRequest,
    known: Option<ToolCall>,
    home: Option<&Path>,
    cwd: &Path,
    mut read: impl FnMut(&Path, bool) -> PathReading,
) -> RequestFacts {
    let mut view = view(request, known.as_ref());
    let write = view.category() != Category::Read;
    let sent = view.paths();
    let mut extra: Vec<String> = Vec::new();
    let mut readings = Vec::new();
    let mut refusal = None;
    for path in &sent {
        let expanded = PathBuf::from(policy::expand_path(path, home, cwd));
        // Every file the path can mean: warden's own files are refused on
        // each, and the user's rules see each as one more location.
        let reading = read(&expanded, write);
        let normalized = reading.normalized;
        let mut meant = vec![normalized.display().to_string()];
        for (candidate, protected) in reading.meant {
            if let Some(why) = protected {
                refusal.get_or_insert(Refusal::Protected(why));
            }
            let candidate = candidate.display().to_string();
            if !meant.contains(&candidate) {
                meant.push(candidate.clone());
            }
            if Path::new(&candidate) == normalized {
                continue;
            }
            if !sent.contains(&candidate) && !extra.contains(&candidate) {
                extra.push(candidate);
            }
        }
        readings.push((meant[0].clone(), meant));
    }
    if !extra.is_empty() {
        // The request's own locations (with their lines), else the known call's.
        let mut locations = request
            .fields
            .locations
            .clone()
            .filter(|l| !l.is_empty())
            .or_else(|| known.map(|k| k.locations))
            .unwrap_or_default();
        locations.extend(extra.iter().map(|path| Location {
            path: path.clone(),
            line: None,
        }));
        request.fields.locations = Some(locations);
        view.locations.extend(extra);
    }
    RequestFacts {
        view,
        readings,
        refusal,
        in_session: true,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What the disk says is what the rules see: each file a path can
    /// mean is a location of the request and of its view, and one of
    /// warden's own files among them refuses it. The disk is asked with
    /// `~` taken as the chat's home, and for a read.
    #[test]
    fn gathered_facts_carry_every_reading_and_refuse_warden_s_own_files() {
        let mut request = crate::test_support::read_of("~/proj/up/../key");
        let mut asked = Vec::new();
        let facts = gather(
            &mut request,
            None,
            Some(Path::new("/home/u")),
            Path::new("/home/u/proj"),
            |path, write| {
                asked.push((path.to_path_buf(), write));
                PathReading {
                    normalized: PathBuf::from("/home/u/proj/key"),
                    meant: vec![
                        (PathBuf::from("/home/u/proj/key"), None),
                        (
                            PathBuf::from("/home/u/.config/warden/key"),
                            Some("warden's own".to_string()),
                        ),
                    ],
                }
            },
        );
        assert_eq!(
            asked,
            [(PathBuf::from("/home/u/proj/up/../key"), false)],
            "the disk is asked once, for a read, with ~ expanded"
        );
        assert_eq!(
            facts.refusal,
            Some(Refusal::Protected("warden's own".to_string()))
        );
        let own = "/home/u/.config/warden/key".to_string();
        assert!(facts.view.locations.contains(&own), "{:?}", facts.view);
        let shown: Vec<String> = request
            .fields
            .locations
            .unwrap_or_default()
            .into_iter()
            .map(|l| l.path)
            .collect();
        assert_eq!(shown, ["~/proj/up/../key".to_string(), own.clone()]);
        assert_eq!(
            facts.readings,
            [(
                "/home/u/proj/key".to_string(),
                vec!["/home/u/proj/key".to_string(), own]
            )]
        );
        assert!(facts.in_session);
    }

    /// A path that means only itself adds nothing and refuses nothing.
    #[test]
    fn a_path_that_means_only_itself_adds_no_location() {
        let mut request = crate::test_support::read_of("/w/a");
        let facts = gather(&mut request, None, None, Path::new("/w"), |path, _| {
            PathReading {
                normalized: path.to_path_buf(),
                meant: vec![(path.to_path_buf(), None)],
            }
        });
        assert_eq!(facts.refusal, None);
        assert_eq!(facts.view.locations, ["/w/a".to_string()]);
        assert_eq!(request.fields.locations.map(|l| l.len()), Some(1));
    }
}
