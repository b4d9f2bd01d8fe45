//! The simulator speaks GitHub's shapes: every answer it gives Kandev is
//! validated against GitHub's published OpenAPI description
//! (`@octokit/openapi`, from the npm registry; `cargo xtask test` fetches it
//! into `target/octokit-openapi/`).

use std::path::PathBuf;

use jsonschema::Draft;
use kandev_server::github_sim::check_apps::{CheckReport, SimRequired};
use kandev_server::github_sim::shapes::ACTIONS_APP_ID;
use kandev_server::github_sim::{Faults, NewPr, PrPatch, SimRuleset};
use reqwest::Method;
use serde_json::{Value, json};

use crate::github_support::simulator;

const BASE: &str = "https://openapi.github.test/api.json";

fn description_path() -> PathBuf {
    if let Ok(p) = std::env::var("KANDEV_GITHUB_OPENAPI") {
        return PathBuf::from(p);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/octokit-openapi/api.github.com.json")
}

/// OpenAPI 3.0 schema → JSON Schema: `nullable` becomes a `null` alternative,
/// and local references point into the registered description.
fn convert(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for child in map.values_mut() {
                convert(child);
            }
            if let Some(Value::String(r)) = map.get_mut("$ref")
                && r.starts_with("#/")
            {
                *r = format!("{BASE}{r}");
            }
            if map.remove("nullable") == Some(Value::Bool(true)) {
                match map.get("type").cloned() {
                    Some(Value::String(t)) => {
                        map.insert("type".into(), json!([t, "null"]));
                        if let Some(Value::Array(e)) = map.get_mut("enum") {
                            e.push(Value::Null);
                        }
                    }
                    _ => {
                        let inner = Value::Object(std::mem::take(map));
                        map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(convert),
        _ => {}
    }
}

struct Description {
    doc: Value,
    resource: Value,
}

impl Description {
    fn load() -> Description {
        let path = description_path();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "GitHub's OpenAPI description is missing at {} ({e}); `cargo xtask test` fetches it \
                 (npm pack @octokit/openapi), or set KANDEV_GITHUB_OPENAPI",
                path.display()
            )
        });
        let doc: Value = serde_json::from_str(&text).expect("the description is JSON");
        let mut resource = json!({"components": doc["components"].clone()});
        convert(&mut resource);
        Description { doc, resource }
    }

    /// The response schema for one (path template, method, status).
    fn schema(&self, template: &str, method: &str, status: u16) -> Value {
        let op = &self.doc["paths"][template][method.to_lowercase()];
        assert!(op.is_object(), "GitHub documents no {method} {template}");
        let mut resp = op["responses"][status.to_string()].clone();
        assert!(resp.is_object(), "GitHub documents no {status} for {method} {template}");
        if let Some(r) = resp["$ref"].as_str() {
            let name = r.rsplit('/').next().unwrap_or_default();
            resp = self.doc["components"]["responses"][name].clone();
        }
        // Some answers document no body (a 422 on deleting a ref): anything goes.
        let mut schema = match &resp["content"]["application/json"]["schema"] {
            Value::Null => json!({}),
            s => s.clone(),
        };
        convert(&mut schema);
        schema
    }

    fn errors(&self, schema: &Value, body: &Value) -> Vec<String> {
        let validator = jsonschema::options()
            .with_draft(Draft::Draft4)
            .with_resource(BASE, Draft::Draft4.create_resource(self.resource.clone()))
            .build(schema)
            .expect("the schema compiles");
        validator
            .iter_errors(body)
            .take(8)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }
}

struct Call {
    method: Method,
    path: String,
    template: &'static str,
    body: Option<Value>,
    status: u16,
}

fn call(method: Method, path: String, template: &'static str, status: u16) -> Call {
    Call {
        method,
        path,
        template,
        body: None,
        status,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_simulator_answer_validates_against_githubs_openapi_description() {
    let description = Description::load();
    let gh = simulator().await;
    let s = &gh.sim;
    // One requirement pinned to GitHub Actions, one from any source.
    s.protect_with_checks(
        "acme",
        "api",
        Some(vec![SimRequired::pinned("build", ACTIONS_APP_ID), "docs".into()]),
    )
    .unwrap();
    s.set_required_approvals("acme", "api", 1).unwrap();
    s.protect_reviews("acme", "api", true, &["lead"]).unwrap();
    s.add_ruleset(
        "acme",
        "api",
        SimRuleset {
            name: "main".into(),
            required_checks: vec!["lint".into(), SimRequired::pinned("build", ACTIONS_APP_ID)],
            required_approvals: 1,
            thread_resolution: true,
            merge_queue: true,
            allowed_merge_methods: Some(vec!["squash".into(), "rebase".into()]),
            linear_history: true,
            required_deployments: vec!["staging".into()],
            code_owner_review: true,
            ..Default::default()
        },
    )
    .unwrap();
    let (plain, sha) = gh.open("Plain");
    let deployment = s.deploy("acme", "api", &sha, "staging", "success").unwrap();
    let (fork, _) = s
        .open_pr(
            "acme",
            "api",
            NewPr {
                title: "From a fork".into(),
                head: Some("fix".into()),
                head_repo: Some("alice/api".into()),
                labels: vec!["bug".into()],
                ..Default::default()
            },
        )
        .unwrap();
    let (merged, _) = gh.open("Merged");
    s.merge_pr("acme", "api", merged).unwrap();
    let (behind, _) = gh.open("Behind");
    s.patch_pr(
        "acme",
        "api",
        behind,
        PrPatch {
            behind: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    s.push("acme", "api", fork).unwrap(); // mergeable: null for a while
    s.add_review("acme", "api", plain, "octo", "APPROVED").unwrap();
    s.add_review("acme", "api", plain, "", "COMMENTED").unwrap(); // a deleted account
    s.set_check_run("acme", "api", &sha, "build", "completed", Some("success"))
        .unwrap();
    s.set_check_run("acme", "api", &sha, "lint", "in_progress", None)
        .unwrap();
    s.set_status("acme", "api", &sha, "ci/legacy", "pending").unwrap();
    // A third-party CI app reports a same-named check.
    s.report_check_run(
        "acme",
        "api",
        &sha,
        &CheckReport::new("build", "completed", Some("failure")).from_app(4242),
    )
    .unwrap();

    let pull = "/repos/{owner}/{repo}/pulls/{pull_number}";
    // The validator is live: last release's shape (no node_id, a bare user,
    // a head without its repository) is refused.
    let old = json!({"number": 1, "state": "open", "title": "t", "user": {"login": "octo"},
                     "head": {"ref": "f", "sha": "abc"}, "base": {"ref": "main"}});
    let refused = description.errors(&description.schema(pull, "GET", 200), &old);
    assert!(!refused.is_empty(), "a PR without required fields must not validate");
    let mut calls = vec![
        call(Method::GET, format!("/repos/acme/api/pulls/{plain}"), pull, 200),
        call(Method::GET, format!("/repos/acme/api/pulls/{fork}"), pull, 200),
        call(Method::GET, format!("/repos/acme/api/pulls/{merged}"), pull, 200),
        call(Method::GET, format!("/repos/acme/api/pulls/{behind}"), pull, 200),
        call(Method::GET, "/repos/acme/api/pulls/999".into(), pull, 404),
        call(
            Method::GET,
            "/repos/acme/api/pulls?state=open&base=main".into(),
            "/repos/{owner}/{repo}/pulls",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/pulls/{plain}/reviews"),
            "/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/compare/main...{sha}?per_page=1"),
            "/repos/{owner}/{repo}/compare/{basehead}",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/git/trees/{sha}?recursive=1"),
            "/repos/{owner}/{repo}/git/trees/{tree_sha}",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/git/trees/{sha}"),
            "/repos/{owner}/{repo}/git/trees/{tree_sha}",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/deployments?sha={sha}&environment=staging&per_page=1"),
            "/repos/{owner}/{repo}/deployments",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/deployments/{deployment}/statuses?per_page=1"),
            "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses",
            200,
        ),
        call(
            Method::GET,
            "/repos/acme/api/deployments/999999/statuses".into(),
            "/repos/{owner}/{repo}/deployments/{deployment_id}/statuses",
            404,
        ),
        call(
            Method::GET,
            "/repos/acme/api/git/trees/0000000000000000000000000000000000000bad".into(),
            "/repos/{owner}/{repo}/git/trees/{tree_sha}",
            404,
        ),
        call(
            Method::GET,
            "/repos/acme/api/compare/main...0000000000000000000000000000000000000bad".into(),
            "/repos/{owner}/{repo}/compare/{basehead}",
            404,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/commits/{sha}/check-runs"),
            "/repos/{owner}/{repo}/commits/{ref}/check-runs",
            200,
        ),
        call(
            Method::GET,
            format!("/repos/acme/api/commits/{sha}/status"),
            "/repos/{owner}/{repo}/commits/{ref}/status",
            200,
        ),
        call(
            Method::GET,
            "/repos/acme/api/branches/main/protection/required_status_checks".into(),
            "/repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks",
            200,
        ),
        call(
            Method::GET,
            "/repos/acme/api/branches/main/protection/required_pull_request_reviews".into(),
            "/repos/{owner}/{repo}/branches/{branch}/protection/required_pull_request_reviews",
            200,
        ),
        call(
            Method::GET,
            "/repos/acme/api/rules/branches/main".into(),
            "/repos/{owner}/{repo}/rules/branches/{branch}",
            200,
        ),
        call(
            Method::GET,
            "/search/issues?q=repo:acme/api+is:pr".into(),
            "/search/issues",
            200,
        ),
        call(
            Method::GET,
            "/search/repositories?q=api+org:acme".into(),
            "/search/repositories",
            200,
        ),
        call(Method::GET, "/user/orgs".into(), "/user/orgs", 200),
        call(Method::GET, "/rate_limit".into(), "/rate_limit", 200),
        call(
            Method::PUT,
            format!("/repos/acme/api/pulls/{behind}/update-branch"),
            "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
            202,
        ),
        call(
            Method::PUT,
            format!("/repos/acme/api/pulls/{plain}/update-branch"),
            "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
            422,
        ),
        call(
            Method::DELETE,
            "/repos/acme/api/git/refs/heads/no-such-branch".into(),
            "/repos/{owner}/{repo}/git/refs/{ref}",
            422,
        ),
    ];
    let merge = "/repos/{owner}/{repo}/pulls/{pull_number}/merge";
    let mut stale = call(Method::PUT, format!("/repos/acme/api/pulls/{plain}/merge"), merge, 409);
    stale.body = Some(json!({"sha": "0".repeat(40)}));
    calls.push(stale);
    let mut refused = call(Method::PUT, format!("/repos/acme/api/pulls/{plain}/merge"), merge, 405);
    refused.body = Some(json!({"sha": sha, "merge_method": "squash"}));
    calls.push(refused);
    // A method the ruleset does not allow.
    let mut method = call(Method::PUT, format!("/repos/acme/api/pulls/{plain}/merge"), merge, 422);
    method.body = Some(json!({"sha": sha, "merge_method": "merge"}));
    calls.push(method);

    let http = reqwest::Client::new();
    let mut failures = vec![];
    let mut checked = 0;
    let send = async |c: &Call| {
        let mut req = http
            .request(c.method.clone(), format!("{}{}", gh.base, c.path))
            .header("authorization", "Bearer t");
        if let Some(b) = &c.body {
            req = req.json(b);
        }
        let r = req.send().await.expect("the simulator answers");
        let status = r.status().as_u16();
        let body: Value = r.json().await.unwrap_or(Value::Null);
        (status, body)
    };
    for c in &calls {
        let (status, body) = send(c).await;
        assert_eq!(status, c.status, "{} {}: {body}", c.method, c.path);
        let schema = description.schema(c.template, c.method.as_str(), c.status);
        let errors = description.errors(&schema, &body);
        if !errors.is_empty() {
            failures.push(format!("{} {} → {}: {}", c.method, c.path, c.status, errors.join("; ")));
        }
        checked += 1;
    }
    // A merge GitHub accepts, and a 401 after the token is revoked.
    s.clear_rules("acme", "api").unwrap();
    s.set_check_run("acme", "api", &sha, "lint", "completed", Some("success"))
        .unwrap();
    s.set_status("acme", "api", &sha, "ci/legacy", "success").unwrap();
    let mut ok = call(Method::PUT, format!("/repos/acme/api/pulls/{plain}/merge"), merge, 200);
    ok.body = Some(json!({"sha": sha, "merge_method": "squash"}));
    let (status, body) = send(&ok).await;
    assert_eq!(status, 200, "{body}");
    let errors = description.errors(&description.schema(merge, "PUT", 200), &body);
    if !errors.is_empty() {
        failures.push(format!("merge 200: {}", errors.join("; ")));
    }
    s.set_faults(Faults {
        revoked_token: true,
        ..Default::default()
    });
    let unauthorized = call(Method::GET, "/user/orgs".into(), "/user/orgs", 401);
    let (status, body) = send(&unauthorized).await;
    assert_eq!(status, 401);
    let errors = description.errors(&description.schema("/user/orgs", "GET", 401), &body);
    if !errors.is_empty() {
        failures.push(format!("orgs 401: {}", errors.join("; ")));
    }
    checked += 2;
    assert!(
        failures.is_empty(),
        "{} of {checked} answers do not validate:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(checked, calls.len() + 2);
}
