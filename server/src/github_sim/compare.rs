//! Commits' contents, as far as a PR's diff goes: every commit that was a
//! PR's head remembers the files it changes against the base, and
//! `GET /compare/{base}...{head}` lists them as GitHub does — pinned to
//! SHAs, the first page only, at most 300 files.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Simulator;
use super::api::{Answer, Op, api, not_found};
use super::shapes::{API, WEB, user};
use super::state::{SimRepo, SimState};

/// GitHub lists at most this many files of a comparison.
pub const FILE_CAP: usize = 300;

/// One file a commit changes against its PR's base.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SimFile {
    pub filename: String,
    /// `added` or `modified`.
    pub status: String,
    /// The file's blob after the change.
    pub blob: String,
    /// Its mode is `100755` rather than `100644` (compare does not say).
    #[serde(default)]
    pub executable: bool,
}

impl SimFile {
    pub fn mode(&self) -> &'static str {
        if self.executable { "100755" } else { "100644" }
    }
}

/// Ways GitHub's compare answers leave a diff's identity unsaid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareQuirk {
    /// `files` left out: a diff GitHub could not compute in time.
    OmitsFiles,
    /// Each file's `sha` is `null` (the schema allows it).
    NullShas,
}

/// How a new head's diff relates to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffChange {
    /// A rebase, or a clean merge of the base that touched none of the PR's
    /// files: the very same files and blobs.
    Same,
    /// A commit on top: one more file.
    AddFile,
    /// A merge of a base that changed the PR's own files: their merged
    /// blobs differ from the reviewed ones.
    Rewrite,
    /// A commit making the first reviewed file executable, its content
    /// unchanged: compare lists the very same diff.
    Chmod,
}

impl SimState {
    /// Records the diff of `to`, derived from `from`'s.
    pub fn carry_diff(&mut self, o: &str, r: &str, from: &str, to: &str, change: DiffChange) {
        let blob = self.new_sha();
        let Some(repo) = self.repo_mut(o, r) else { return };
        let mut files = repo.diffs.get(from).cloned().unwrap_or_default();
        match change {
            DiffChange::Same => {}
            DiffChange::AddFile => files.push(SimFile {
                // The sha's tail: its head is zeros for the sim's first shas.
                filename: format!("src/change_{}.rs", &blob[blob.len() - 12..]),
                status: "added".into(),
                blob,
                ..Default::default()
            }),
            DiffChange::Rewrite => {
                if let Some(first) = files.first_mut() {
                    first.blob = blob;
                }
            }
            DiffChange::Chmod => {
                if let Some(first) = files.first_mut() {
                    first.executable = true;
                }
            }
        }
        repo.diffs.insert(to.to_string(), files);
    }

    /// A new PR's head: one file of its own.
    pub fn first_diff(&mut self, o: &str, r: &str, head_ref: &str, sha: &str) {
        let blob = self.new_sha();
        if let Some(repo) = self.repo_mut(o, r) {
            let file = SimFile {
                filename: format!("src/{}.rs", head_ref.replace('/', "_")),
                status: "added".into(),
                blob,
                ..Default::default()
            };
            repo.diffs.insert(sha.to_string(), vec![file]);
        }
    }
}

/// `commit`, as a comparison's base and merge base name it.
fn commit(repo: &SimRepo, sha: &str) -> Value {
    let full = format!("{}/{}", repo.owner, repo.name);
    let url = format!("{API}/repos/{full}/commits/{sha}");
    let person = json!({"name": "Octo Cat", "email": "octocat@github.com", "date": "2026-01-01T00:00:00Z"});
    json!({
        "url": url, "sha": sha, "node_id": format!("C_kwDOsim{}", &sha[..sha.len().min(12)]),
        "html_url": format!("{WEB}/{full}/commit/{sha}"), "comments_url": format!("{url}/comments"),
        "commit": {
            "url": format!("{API}/repos/{full}/git/commits/{sha}"), "author": person, "committer": person,
            "message": "A commit", "comment_count": 0,
            "tree": {"sha": sha, "url": format!("{API}/repos/{full}/git/trees/{sha}")},
        },
        "author": user("octocat"), "committer": user("octocat"), "parents": [],
    })
}

fn diff_entry(repo: &SimRepo, head: &str, f: &SimFile) -> Value {
    let full = format!("{}/{}", repo.owner, repo.name);
    let sha = (repo.compare_quirk != Some(CompareQuirk::NullShas)).then_some(&f.blob);
    json!({
        "sha": sha, "filename": f.filename, "status": f.status,
        "additions": 3, "deletions": 0, "changes": 3,
        "blob_url": format!("{WEB}/{full}/blob/{head}/{}", f.filename),
        "raw_url": format!("{WEB}/{full}/raw/{head}/{}", f.filename),
        "contents_url": format!("{API}/repos/{full}/contents/{}?ref={head}", f.filename),
        "patch": "@@ -0,0 +1,3 @@\n+a\n+b\n+c",
    })
}

/// `base` is a branch PRs are based on (or the default); `head` a commit
/// that was some PR's head. Anything else is GitHub's 404.
pub async fn compare(
    State(sim): State<Simulator>,
    Path((o, r, basehead)): Path<(String, String, String)>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("compare", &o, &r), |s| {
        let Some(repo) = s.repo(&o, &r) else { return not_found() };
        let Some((base, head)) = basehead.split_once("...") else {
            return not_found();
        };
        let known_base = base == repo.default_branch || repo.prs.values().any(|p| p.base_ref == base);
        let Some(files) = repo.diffs.get(head).filter(|_| known_base) else {
            return not_found();
        };
        let full = format!("{o}/{r}");
        let files: Vec<Value> = files.iter().take(FILE_CAP).map(|f| diff_entry(repo, head, f)).collect();
        let base_commit = commit(repo, &super::trees::base_commit(base));
        let mut answer = json!({
            "url": format!("{API}/repos/{full}/compare/{basehead}"),
            "html_url": format!("{WEB}/{full}/compare/{basehead}"),
            "permalink_url": format!("{WEB}/{full}/compare/{basehead}"),
            "diff_url": format!("{WEB}/{full}/compare/{basehead}.diff"),
            "patch_url": format!("{WEB}/{full}/compare/{basehead}.patch"),
            "base_commit": base_commit.clone(), "merge_base_commit": base_commit,
            "status": "ahead", "ahead_by": 1, "behind_by": 0, "total_commits": 1,
            "commits": [commit(repo, head)], "files": files,
        });
        if repo.compare_quirk == Some(CompareQuirk::OmitsFiles) {
            answer.as_object_mut().map(|a| a.remove("files"));
        }
        Answer::ok(answer)
    })
    .await
}
