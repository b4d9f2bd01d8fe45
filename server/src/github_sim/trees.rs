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

/// A commit's files: each one's blob and mode.
type Files = BTreeMap<String, (String, &'static str)>;

/// The files every base branch holds.
fn base_files() -> Files {
    ["README.md", "Cargo.toml", "src/lib.rs"]
        .iter()
        .enumerate()
        .map(|(i, path)| (path.to_string(), (format!("{:0>40x}", 0xba5e_0000 + i), "100644")))
        .collect()
}

fn object_sha(parts: &impl Hash) -> String {
    let mut h = DefaultHasher::new();
    parts.hash(&mut h);
    format!("{:0>40x}", h.finish())
}

/// The files of commit `sha` (a base commit or a PR head).
fn files_of(repo: &SimRepo, sha: &str) -> Option<Files> {
    let mut files = base_files();
    let is_base = std::iter::once(&repo.default_branch)
        .chain(repo.prs.values().map(|p| &p.base_ref))
        .any(|b| base_commit(b) == sha);
    if is_base {
        return Some(files);
    }
    for f in repo.diffs.get(sha)? {
        files.insert(f.filename.clone(), (f.blob.clone(), f.mode()));
    }
    Some(files)
}

/// Every entry of the tree, directories first as git lists them.
fn entries(repo: &SimRepo, files: &Files, recursive: bool) -> Vec<Value> {
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
    let blob_entries = files.iter().map(|(path, (blob, mode))| {
        (
            path.clone(),
            json!({
                "path": path, "mode": mode, "type": "blob", "sha": blob, "size": 30,
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

/// The entries of commit `sha`'s tree, cut at the repository's limit, and
/// whether they were cut; `None` for a commit the repository lacks.
fn listing(repo: &SimRepo, sha: &str, recursive: bool) -> Option<(Vec<Value>, bool)> {
    let mut tree = entries(repo, &files_of(repo, sha)?, recursive);
    let limit = repo.tree_limit.unwrap_or(TREE_ENTRY_LIMIT);
    let truncated = tree.len() > limit;
    tree.truncate(limit);
    Some((tree, truncated))
}

/// GraphQL's `object(expression: "sha:dir")` for a directory: a `Tree`
/// with its entries, each mode a number as GraphQL gives it (`33188` for
/// `100644`); `None` for a commit or a directory that is not there.
pub fn directory(repo: &SimRepo, expression: &str) -> Option<Value> {
    let (sha, dir) = expression.split_once(':')?;
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let all = entries(repo, &files_of(repo, sha)?, true);
    let inside: Vec<Value> = all
        .iter()
        .filter_map(|e| {
            let name = e["path"].as_str()?.strip_prefix(&prefix)?;
            let mode = u32::from_str_radix(e["mode"].as_str()?, 8).ok()?;
            (!name.contains('/')).then(|| {
                json!({"__typename": "TreeEntry", "name": name, "mode": mode,
                       "oid": e["sha"], "type": e["type"], "path": e["path"]})
            })
        })
        .collect();
    let sha_of_dir = all.iter().find(|e| e["path"] == dir).map(|e| e["sha"].clone());
    if inside.is_empty() {
        return None;
    }
    Some(json!({"__typename": "Tree", "oid": sha_of_dir.unwrap_or_else(|| json!(sha)), "entries": inside}))
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
        let Some((tree, truncated)) = listing(repo, &sha, q.recursive.is_some()) else {
            return not_found();
        };
        let full = format!("{o}/{r}");
        Answer::ok(json!({
            "sha": sha, "url": format!("{API}/repos/{full}/git/trees/{sha}"),
            "tree": tree, "truncated": truncated,
        }))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::super::compare::SimFile;
    use super::*;

    fn repo_with_head(head: &str) -> SimRepo {
        let mut repo = SimRepo {
            owner: "acme".into(),
            name: "api".into(),
            default_branch: "main".into(),
            ..Default::default()
        };
        let file = |name: &str, blob: &str| SimFile {
            filename: name.into(),
            status: "modified".into(),
            blob: blob.into(),
            ..Default::default()
        };
        repo.diffs
            .insert(head.into(), vec![file("src/lib.rs", "b1"), file("docs/new.md", "b2")]);
        repo
    }

    fn paths(tree: &[Value]) -> Vec<&str> {
        tree.iter().filter_map(|e| e["path"].as_str()).collect()
    }

    #[test]
    fn a_heads_tree_is_the_bases_files_with_its_diff_applied_directories_first() {
        let repo = repo_with_head("h1");
        let (tree, cut) = listing(&repo, "h1", true).expect("a known head");
        assert!(!cut);
        assert_eq!(
            paths(&tree),
            ["Cargo.toml", "README.md", "docs", "docs/new.md", "src", "src/lib.rs"]
        );
        let lib = tree.iter().find(|e| e["path"] == "src/lib.rs").expect("lib");
        assert_eq!(lib["sha"], "b1");
        assert_eq!(tree.iter().find(|e| e["path"] == "src").expect("src")["type"], "tree");
        let (base, _) = listing(&repo, &base_commit("main"), true).expect("the base");
        assert_eq!(paths(&base), ["Cargo.toml", "README.md", "src", "src/lib.rs"]);
        assert_ne!(base[3]["sha"], "b1");
        assert!(listing(&repo, "unknown", true).is_none());
    }

    #[test]
    fn a_tree_lists_only_its_top_level_unless_recursive_and_is_cut_past_the_limit() {
        let mut repo = repo_with_head("h1");
        let (top, _) = listing(&repo, "h1", false).expect("a known head");
        assert_eq!(paths(&top), ["Cargo.toml", "README.md", "docs", "src"]);
        repo.tree_limit = Some(4);
        let (cut, truncated) = listing(&repo, "h1", true).expect("a known head");
        assert!(truncated);
        assert_eq!(cut.len(), 4);
    }

    #[test]
    fn a_directory_lists_its_own_entries_with_modes_as_graphql_numbers() {
        let mut repo = repo_with_head("h1");
        if let Some(files) = repo.diffs.get_mut("h1") {
            files[0].executable = true;
        }
        let src = directory(&repo, "h1:src").expect("a directory");
        assert_eq!(src["__typename"], "Tree");
        let lib = &src["entries"][0];
        assert_eq!(
            (lib["name"].as_str(), lib["mode"].as_u64()),
            (Some("lib.rs"), Some(0o100755))
        );
        assert_eq!(src["entries"].as_array().map(Vec::len), Some(1));
        let top = directory(&repo, "h1:").expect("the top level");
        let names: Vec<_> = top["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["name"].as_str())
            .collect();
        assert_eq!(names, ["Cargo.toml", "README.md", "docs", "src"]);
        assert_eq!(top["entries"][2]["mode"], 0o40000);
        assert_eq!(top["entries"][0]["mode"], 33188);
        assert!(directory(&repo, "h1:nowhere").is_none());
        assert!(directory(&repo, "unknown:src").is_none());
    }
}
