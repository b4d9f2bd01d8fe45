//! GitHub's REST objects in full, every field GitHub's OpenAPI description
//! requires (the simulator's suite validates them against it), so a client
//! that leans on a field GitHub really sends is tested against it.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::state::{SimCheckRun, SimPr, SimRepo, SimReview, SimStatus};

pub const API: &str = "https://api.github.com";
pub const WEB: &str = "https://github.com";

pub fn ts(t: Option<DateTime<Utc>>) -> Value {
    t.map(|t| json!(t.to_rfc3339_opts(SecondsFormat::Secs, true)))
        .unwrap_or(Value::Null)
}

fn ts_or_now(t: Option<DateTime<Utc>>) -> Value {
    ts(Some(t.unwrap_or_else(Utc::now)))
}

/// A stable id for a login (GitHub's ids are opaque integers).
pub fn user_id(login: &str) -> i64 {
    let mut h = DefaultHasher::new();
    login.to_lowercase().hash(&mut h);
    (h.finish() % 90_000_000) as i64 + 1_000_000
}

/// `simple-user`; `null` for a deleted account (an empty login).
pub fn user(login: &str) -> Value {
    if login.is_empty() {
        return Value::Null;
    }
    let id = user_id(login);
    let url = format!("{API}/users/{login}");
    let kind = if login.ends_with("[bot]") { "Bot" } else { "User" };
    json!({
        "login": login, "id": id, "node_id": format!("U_kgDO{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "", "url": url, "html_url": format!("{WEB}/{login}"),
        "followers_url": format!("{url}/followers"),
        "following_url": format!("{url}/following{{/other_user}}"),
        "gists_url": format!("{url}/gists{{/gist_id}}"),
        "starred_url": format!("{url}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{url}/subscriptions"),
        "organizations_url": format!("{url}/orgs"),
        "repos_url": format!("{url}/repos"),
        "events_url": format!("{url}/events{{/privacy}}"),
        "received_events_url": format!("{url}/received_events"),
        "type": kind, "site_admin": false,
    })
}

/// `repository` (and, being a superset, `minimal-repository`).
pub fn repository(owner: &str, name: &str, id: i64, private: bool, default_branch: &str, fork: bool) -> Value {
    let full = format!("{owner}/{name}");
    let url = format!("{API}/repos/{full}");
    let mut v = json!({
        "id": id, "node_id": format!("R_kgDO{id}"), "name": name, "full_name": full,
        "owner": user(owner), "private": private, "fork": fork,
        "html_url": format!("{WEB}/{full}"), "description": null, "url": url,
        "clone_url": format!("{WEB}/{full}.git"), "git_url": format!("git://github.com/{full}.git"),
        "ssh_url": format!("git@github.com:{full}.git"), "svn_url": format!("{WEB}/{full}"),
        "mirror_url": null, "homepage": null, "language": null, "license": null,
        "default_branch": default_branch, "forks": 0, "forks_count": 0, "open_issues": 0, "open_issues_count": 0,
        "stargazers_count": 0, "watchers": 0, "watchers_count": 0, "size": 128,
        "has_downloads": true, "has_issues": true, "has_projects": true, "has_wiki": false, "has_pages": false,
        "archived": false, "disabled": false, "visibility": if private { "private" } else { "public" },
        "pushed_at": "2026-01-05T10:00:00Z", "created_at": "2025-06-01T09:00:00Z", "updated_at": "2026-01-05T10:00:00Z",
    });
    if let Some(o) = v.as_object_mut() {
        for (k, tail) in REPO_URLS {
            o.insert(format!("{k}_url"), json!(format!("{url}/{tail}")));
        }
    }
    v
}

/// A repository's hypermedia URLs: `{key}_url` → path under the repository.
const REPO_URLS: &[(&str, &str)] = &[
    ("archive", "{archive_format}{/ref}"),
    ("assignees", "assignees{/user}"),
    ("blobs", "git/blobs{/sha}"),
    ("branches", "branches{/branch}"),
    ("collaborators", "collaborators{/collaborator}"),
    ("comments", "comments{/number}"),
    ("commits", "commits{/sha}"),
    ("compare", "compare/{base}...{head}"),
    ("contents", "contents/{+path}"),
    ("contributors", "contributors"),
    ("deployments", "deployments"),
    ("downloads", "downloads"),
    ("events", "events"),
    ("forks", "forks"),
    ("git_commits", "git/commits{/sha}"),
    ("git_refs", "git/refs{/sha}"),
    ("git_tags", "git/tags{/sha}"),
    ("hooks", "hooks"),
    ("issue_comment", "issues/comments{/number}"),
    ("issue_events", "issues/events{/number}"),
    ("issues", "issues{/number}"),
    ("keys", "keys{/key_id}"),
    ("labels", "labels{/name}"),
    ("languages", "languages"),
    ("merges", "merges"),
    ("milestones", "milestones{/number}"),
    ("notifications", "notifications{?since,all,participating}"),
    ("pulls", "pulls{/number}"),
    ("releases", "releases{/id}"),
    ("stargazers", "stargazers"),
    ("statuses", "statuses/{sha}"),
    ("subscribers", "subscribers"),
    ("subscription", "subscription"),
    ("tags", "tags"),
    ("teams", "teams"),
    ("trees", "git/trees{/sha}"),
];

fn label(repo: &SimRepo, name: &str) -> Value {
    let id = user_id(&format!("label:{name}"));
    json!({"id": id, "node_id": format!("LA_kwDO{id}"), "name": name, "description": null, "color": "ededed",
           "default": false, "url": format!("{API}/repos/{}/{}/labels/{name}", repo.owner, repo.name)})
}

impl SimRepo {
    pub fn json(&self) -> Value {
        repository(
            &self.owner,
            &self.name,
            self.id,
            self.private,
            &self.default_branch,
            false,
        )
    }

    pub fn pr_html(&self, number: i64) -> String {
        format!("{WEB}/{}/{}/pull/{number}", self.owner, self.name)
    }

    pub fn pr_api(&self, number: i64) -> String {
        format!("{API}/repos/{}/{}/pulls/{number}", self.owner, self.name)
    }

    /// A PR's head: a fork's head names the fork's owner and repository.
    fn head_json(&self, pr: &SimPr) -> Value {
        let (owner, repo) = match pr.head_repo.as_deref().and_then(|f| f.split_once('/')) {
            Some((o, n)) => (o, repository(o, n, user_id(&format!("{o}/{n}")), false, "main", true)),
            None => (self.owner.as_str(), self.json()),
        };
        json!({"ref": pr.head_ref, "sha": pr.head_sha, "label": format!("{owner}:{}", pr.head_ref),
               "repo": repo, "user": user(owner)})
    }

    pub fn pull_json(&self, pr: &SimPr) -> Value {
        let html = self.pr_html(pr.number);
        let api = self.pr_api(pr.number);
        let issue = format!("{API}/repos/{}/{}/issues/{}", self.owner, self.name, pr.number);
        let statuses = format!("{API}/repos/{}/{}/statuses/{}", self.owner, self.name, pr.head_sha);
        let link = |href: &str| json!({"href": href});
        let head = self.head_json(pr);
        let known = super::rules::mergeable_known(pr);
        let mut v = json!({
            "url": api, "id": pr.id, "node_id": pr.node_id(), "number": pr.number,
            "html_url": html, "diff_url": format!("{html}.diff"), "patch_url": format!("{html}.patch"),
            "issue_url": issue, "commits_url": format!("{api}/commits"),
            "review_comments_url": format!("{api}/comments"),
            "review_comment_url": format!("{API}/repos/{}/{}/pulls/comments{{/number}}", self.owner, self.name),
            "comments_url": format!("{issue}/comments"), "statuses_url": statuses.clone(),
            "state": pr.state, "locked": false, "title": pr.title, "body": pr.body,
            "user": user(&pr.author), "author_association": "MEMBER",
            "labels": pr.labels.iter().map(|l| label(self, l)).collect::<Vec<_>>(),
            "assignee": null, "assignees": [], "milestone": null, "auto_merge": null,
            "requested_reviewers": pr.requested_reviewers.iter().map(|l| user(l)).collect::<Vec<_>>(),
            "requested_teams": [],
        });
        let rest = json!({
            "head": head,
            "base": {"ref": pr.base_ref, "label": format!("{}:{}", self.owner, pr.base_ref), "sha": "b".repeat(40),
                     "repo": self.json(), "user": user(&self.owner)},
            "_links": {"self": link(&api), "html": link(&html), "issue": link(&issue),
                       "comments": link(&format!("{issue}/comments")),
                       "review_comments": link(&format!("{api}/comments")),
                       "review_comment": link(&format!("{API}/repos/{}/{}/pulls/comments{{/number}}", self.owner, self.name)),
                       "commits": link(&format!("{api}/commits")), "statuses": link(&statuses)},
            "draft": pr.draft, "merged": pr.merged,
            "merged_at": ts(pr.merged_at), "closed_at": ts(pr.closed_at),
            "created_at": ts_or_now(pr.created_at), "updated_at": ts_or_now(pr.updated_at),
            "merged_by": if pr.merged { user(super::state::TOKEN_USER) } else { Value::Null },
            "merge_commit_sha": pr.merge_commit_sha,
            "mergeable": if pr.state == "open" && known { json!(!pr.conflict) } else { Value::Null },
            "rebaseable": if pr.state == "open" && known { json!(!pr.conflict) } else { Value::Null },
            "mergeable_state": self.mergeable_state(pr),
            "maintainer_can_modify": pr.head_repo.is_some() && !pr.maintainers_locked_out,
            "comments": 0, "review_comments": pr.threads.len(), "commits": 1,
            "additions": pr.additions, "deletions": pr.deletions, "changed_files": 1,
        });
        merge(&mut v, rest);
        v
    }

    pub fn review_json(&self, pr: &SimPr, r: &SimReview) -> Value {
        let html = format!("{}#pullrequestreview-{}", self.pr_html(pr.number), r.id);
        json!({"id": r.id, "node_id": format!("PRR_kwDO{}", r.id), "user": user(&r.user), "body": "",
               "state": r.state, "commit_id": pr.head_sha, "html_url": html,
               "pull_request_url": self.pr_api(pr.number), "author_association": "MEMBER",
               "submitted_at": "2026-01-05T10:00:00Z",
               "_links": {"html": {"href": html}, "pull_request": {"href": self.pr_api(pr.number)}}})
    }

    pub fn check_run_json(&self, sha: &str, c: &SimCheckRun) -> Value {
        let url = format!("{API}/repos/{}/{}/check-runs/{}", self.owner, self.name, c.id);
        json!({"id": c.id, "node_id": format!("CR_kwDO{}", c.id), "head_sha": sha, "name": c.name,
               "external_id": format!("ext-{}", c.id), "url": url.clone(), "html_url": c.html_url,
               "details_url": c.html_url, "status": c.status, "conclusion": c.conclusion,
               "started_at": ts(c.started_at), "completed_at": ts(c.completed_at),
               "output": {"title": null, "summary": null, "text": null, "annotations_count": 0,
                          "annotations_url": format!("{url}/annotations")},
               "check_suite": {"id": c.id / 2 + 1}, "app": app(c.app), "pull_requests": []})
    }

    pub fn status_json(&self, s: &SimStatus) -> Value {
        json!({"id": s.id, "node_id": format!("SC_kwDO{}", s.id), "state": s.state, "context": s.context,
               "description": null, "target_url": s.target_url, "avatar_url": null,
               "url": format!("{API}/repos/{}/{}/statuses/{}", self.owner, self.name, s.id),
               "created_at": ts_or_now(s.created_at), "updated_at": ts_or_now(s.created_at)})
    }

    pub fn issue_item_json(&self, pr: &SimPr) -> Value {
        let issue = format!("{API}/repos/{}/{}/issues/{}", self.owner, self.name, pr.number);
        let html = self.pr_html(pr.number);
        json!({"id": pr.id, "node_id": pr.node_id(), "number": pr.number, "title": pr.title, "url": issue.clone(),
               "html_url": html.clone(), "state": pr.state, "locked": false, "user": user(&pr.author),
               "assignee": null, "milestone": null, "comments": 0, "author_association": "MEMBER",
               "comments_url": format!("{issue}/comments"), "events_url": format!("{issue}/events"),
               "labels_url": format!("{issue}/labels{{/name}}"),
               "labels": pr.labels.iter().map(|l| label(self, l)).collect::<Vec<_>>(),
               "repository_url": format!("{API}/repos/{}/{}", self.owner, self.name),
               "closed_at": ts(pr.closed_at), "created_at": ts_or_now(pr.created_at),
               "updated_at": ts_or_now(pr.updated_at), "score": 1.0, "draft": pr.draft,
               "pull_request": {"url": self.pr_api(pr.number), "html_url": html,
                                "diff_url": format!("{}.diff", self.pr_html(pr.number)),
                                "patch_url": format!("{}.patch", self.pr_html(pr.number)),
                                "merged_at": ts(pr.merged_at)}})
    }
}

fn merge(into: &mut Value, more: Value) {
    if let (Some(a), Value::Object(b)) = (into.as_object_mut(), more) {
        a.extend(b);
    }
}

/// GitHub Actions' app id: simulated check runs are reported by it unless a
/// test names another app.
pub const ACTIONS_APP_ID: i64 = 15368;

/// An app's slug: GitHub Actions', or a made-up one for any other app.
pub fn app_slug(id: i64) -> String {
    if id == ACTIONS_APP_ID {
        "github-actions".into()
    } else {
        format!("ci-app-{id}")
    }
}

/// The GitHub App that reported a check run.
fn app(id: i64) -> Value {
    if id == ACTIONS_APP_ID {
        return json!({"id": id, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg", "name": "GitHub Actions",
           "owner": user("github"), "description": "Automate your workflow", "external_url": "https://help.github.com/en/actions",
           "html_url": "https://github.com/apps/github-actions", "created_at": "2018-07-30T09:30:17Z",
           "updated_at": "2024-04-10T20:33:16Z", "permissions": {"checks": "write", "metadata": "read"},
           "events": ["check_run", "check_suite"]});
    }
    let slug = app_slug(id);
    json!({"id": id, "slug": slug, "node_id": format!("A_kwDOsim{id}"), "name": format!("CI app {id}"),
           "owner": user("ci-vendor"), "description": "A third-party CI", "external_url": "https://ci.example",
           "html_url": format!("https://github.com/apps/{slug}"), "created_at": "2021-01-04T10:00:00Z",
           "updated_at": "2024-01-04T10:00:00Z", "permissions": {"checks": "write", "metadata": "read"},
           "events": ["check_run"]})
}

/// `organization-simple`
pub fn org(login: &str) -> Value {
    let id = user_id(login);
    let url = format!("{API}/orgs/{login}");
    json!({"login": login, "id": id, "node_id": format!("O_kgDO{id}"), "url": url.clone(),
           "repos_url": format!("{url}/repos"), "events_url": format!("{url}/events"), "hooks_url": format!("{url}/hooks"),
           "issues_url": format!("{url}/issues"), "members_url": format!("{url}/members{{/member}}"),
           "public_members_url": format!("{url}/public_members{{/member}}"),
           "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"), "description": null})
}

/// A repository as `/search/repositories` lists it.
pub fn repo_search_item(repo: &SimRepo) -> Value {
    let mut v = repo.json();
    if let Some(o) = v.as_object_mut() {
        o.insert("score".into(), json!(1.0));
    }
    v
}
