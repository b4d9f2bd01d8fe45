//! `GET /repos/{o}/{r}/git/trees/{sha}`: a commit's whole tree. A base
//! branch's tree holds a few files of its own; a PR head's tree is that
//! plus the files its diff changes. Like GitHub, a recursive listing past
//! the repository's entry limit (GitHub's: 100,000) is cut and says so.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Simulator;
use super::api::{Answer, Op, api, not_found};
use super::shapes::API;
use super::state::SimRepo;

/// GitHub cuts a recursive tree past this many entries.
pub const TREE_ENTRY_LIMIT: usize = 100_000;

/// The commit a comparison names as the merge base with `base` (the sim
/// keeps one per branch: its base never moves under a PR's files).
pub fn base_commit(base: &str) -> String {
    format!("{:0>40}", base.len())
}

/// The files every base branch holds, with their blobs.
fn base_files() -> BTreeMap<String, String> {
    ["README.md", "Cargo.toml", "src/lib.rs"]
        .iter()
        .enumerate()
        .map(|(i, path)| (path.to_string(), format!("{:0>40x}", 0xba5e_0000 + i)))
        .collect()
}

fn object_sha(parts: &impl Hash) -> String {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    format!("{:0>40x}", h.finish())
}

/// The files of commit `sha` (a base commit or a PR head), with blobs.
fn files_of(repo: &SimRepo, sha: &str) -> Option<BTreeMap<String, String>> {
    let mut files = base_files();
    let is_base = std::iter::once(&repo.default_branch)
        .chain(repo.prs.values().map(|p| &p.base_ref))
        .any(|b| base_commit(b) == sha);
    if is_base {
        return Some(files);
    }
    for f in repo.diffs.get(sha)? {
        files.insert(f.filename.clone(), f.blob.clone());
    }
    Some(files)
}

/// Every entry of the tree, directories first as git lists them.
fn entries(repo: &SimRepo, files: &BTreeMap<String, String>, recursive: bool) -> Vec<Value> {
    let full = format!("{}/{}", repo.owner, repo.name);
    let mut dirs: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for path in files.keys() {
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            at += i;
            dirs.entry(path[..at].to_string()).or_default().push(path);
            at += 1;
        }
    }
    let dir_entries = dirs.iter().map(|(path, inside)| {
        let sha = object_sha(&inside.iter().map(|p| (p, &files[*p])).collect::<Vec<_>>());
        (
            path.clone(),
            json!({
                "path": path, "mode": "040000", "type": "tree", "sha": sha,
                "url": format!("{API}/repos/{full}/git/trees/{sha}"),
            }),
        )
    });
    let blob_entries = files.iter().map(|(path, blob)| {
        (
            path.clone(),
            json!({
                "path": path, "mode": "100644", "type": "blob", "sha": blob, "size": 30,
                "url": format!("{API}/repos/{full}/git/blobs/{blob}"),
            }),
        )
    });
    let mut all: Vec<(String, Value)> = dir_entries
        .chain(blob_entries)
        .filter(|(path, _)| recursive || !path.contains('/'))
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all.into_iter().map(|(_, v)| v).collect()
}

#[derive(Deserialize)]
pub struct TreeQuery {
    recursive: Option<String>,
}

pub async fn tree(
    State(sim): State<Simulator>,
    Path((o, r, sha)): Path<(String, String, String)>,
    Query(q): Query<TreeQuery>,
    h: HeaderMap,
) -> Response {
    api(&sim, &h, Op::repo("trees", &o, &r), |s| {
        let Some(repo) = s.repo(&o, &r) else { return not_found() };
        let Some(files) = files_of(repo, &sha) else {
            return not_found();
        };
        let mut tree = entries(repo, &files, q.recursive.is_some());
        let limit = repo.tree_limit.unwrap_or(TREE_ENTRY_LIMIT);
        let truncated = tree.len() > limit;
        tree.truncate(limit);
        let full = format!("{o}/{r}");
        Answer::ok(json!({
            "sha": sha, "url": format!("{API}/repos/{full}/git/trees/{sha}"),
            "tree": tree, "truncated": truncated,
        }))
    })
    .await
}
