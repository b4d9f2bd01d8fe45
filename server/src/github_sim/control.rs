//! The control interface at `/_sim`: script the world over HTTP (the browser
//! suite and demo mode use this; Rust tests call the methods directly).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::check_apps::{CheckReport, SimRequired};
use super::{AutoCi, Faults, MergeSettings, NewPr, PrPatch, RepoFault, SimResult, SimRuleset, Simulator, Timing};

fn reply<T: serde::Serialize>(r: SimResult<T>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => (StatusCode::NOT_FOUND, Json(json!({"message": e.0}))).into_response(),
    }
}

#[derive(Deserialize)]
struct NewRepo {
    owner: String,
    name: String,
    #[serde(default)]
    private: bool,
}

#[derive(Deserialize)]
struct Login {
    login: String,
}

#[derive(Deserialize)]
struct StatusBody {
    context: String,
    state: String,
}

#[derive(Deserialize)]
struct ReviewBody {
    user: String,
    state: String,
}

#[derive(Deserialize)]
struct Required {
    required_checks: Option<Vec<SimRequired>>,
    /// "Require branches to be up to date before merging".
    #[serde(default)]
    strict: bool,
    /// "Require signed commits".
    #[serde(default)]
    required_signatures: bool,
}

#[derive(Deserialize)]
struct Approvals {
    required_approvals: u32,
}

#[derive(Deserialize)]
struct ThreadBody {
    path: String,
}

#[derive(Deserialize)]
struct Hook {
    url: String,
    secret: String,
}

#[derive(Deserialize)]
struct Limit {
    remaining: i64,
    reset_in_secs: i64,
}

type PrPath = Path<(String, String, i64)>;

pub fn router(sim: Simulator) -> Router {
    Router::new()
        .route(
            "/_sim/repos",
            post(|State(s): State<Simulator>, Json(b): Json<NewRepo>| async move {
                s.add_repo(&b.owner, &b.name, b.private);
                Json(json!({"ok": true}))
            }),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/move",
            post(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<NewRepo>| async move {
                    reply(s.move_repo(&o, &r, &b.owner, &b.name))
                },
            ),
        )
        .route(
            "/_sim/orgs",
            post(|State(s): State<Simulator>, Json(b): Json<Login>| async move {
                s.add_org(&b.login);
                Json(json!({"ok": true}))
            }),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls",
            post(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<NewPr>| async move {
                    reply(s.open_pr(&o, &r, b).map(|(number, sha)| {
                        json!({"number": number, "head_sha": sha,
                "html_url": format!("https://github.com/{o}/{r}/pull/{number}")})
                    }))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls/{number}",
            get(|State(s): State<Simulator>, Path((o, r, n)): PrPath| async move {
                reply(
                    s.pr(&o, &r, n)
                        .ok_or_else(|| super::SimError("no such pull request".into())),
                )
            })
            .patch(
                |State(s): State<Simulator>, Path((o, r, n)): PrPath, Json(b): Json<PrPatch>| async move {
                    reply(s.patch_pr(&o, &r, n, b))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls/{number}/merge",
            post(|State(s): State<Simulator>, Path((o, r, n)): PrPath| async move { reply(s.merge_pr(&o, &r, n)) }),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls/{number}/close",
            post(|State(s): State<Simulator>, Path((o, r, n)): PrPath| async move { reply(s.close_pr(&o, &r, n)) }),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls/{number}/push",
            post(|State(s): State<Simulator>, Path((o, r, n)): PrPath| async move {
                reply(s.push(&o, &r, n).map(|sha| json!({"head_sha": sha})))
            }),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls/{number}/reviews",
            post(
                |State(s): State<Simulator>, Path((o, r, n)): PrPath, Json(b): Json<ReviewBody>| async move {
                    reply(s.add_review(&o, &r, n, &b.user, &b.state))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/commits/{sha}/check-runs",
            post(
                |State(s): State<Simulator>,
                 Path((o, r, sha)): Path<(String, String, String)>,
                 Json(b): Json<CheckReport>| async move {
                    reply(s.report_check_run(&o, &r, &sha, &b).map(|id| json!({"id": id})))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/commits/{sha}/statuses",
            post(
                |State(s): State<Simulator>,
                 Path((o, r, sha)): Path<(String, String, String)>,
                 Json(b): Json<StatusBody>| async move {
                    reply(s.set_status(&o, &r, &sha, &b.context, &b.state))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/protection",
            put(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<Required>| async move {
                    reply(
                        s.protect_with_checks(&o, &r, b.required_checks)
                            .and_then(|()| s.require_up_to_date(&o, &r, b.strict))
                            .and_then(|()| s.require_signed_commits(&o, &r, b.required_signatures)),
                    )
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/protection/reviews",
            put(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<Approvals>| async move {
                    reply(s.set_required_approvals(&o, &r, b.required_approvals))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/settings",
            patch(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<MergeSettings>| async move {
                    reply(s.set_merge_settings(&o, &r, b))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/rulesets",
            post(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<SimRuleset>| async move {
                    reply(s.add_ruleset(&o, &r, b).map(|id| json!({"id": id})))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/ci",
            put(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<Option<AutoCi>>| async move {
                    reply(s.set_auto_ci(&o, &r, b))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/fault",
            put(
                |State(s): State<Simulator>, Path((o, r)): Path<(String, String)>, Json(b): Json<Option<RepoFault>>| async move {
                    s.set_repo_fault(&o, &r, b);
                    Json(json!({"ok": true}))
                },
            ),
        )
        .route(
            "/_sim/repos/{owner}/{repo}/pulls/{number}/threads",
            post(
                |State(s): State<Simulator>, Path((o, r, n)): PrPath, Json(b): Json<ThreadBody>| async move {
                    reply(s.add_thread(&o, &r, n, &b.path).map(|id| json!({"id": id})))
                },
            ),
        )
        .route(
            "/_sim/timing",
            put(|State(s): State<Simulator>, Json(b): Json<Timing>| async move {
                s.set_timing(b);
                Json(json!({"ok": true}))
            }),
        )
        .route(
            "/_sim/webhook",
            put(|State(s): State<Simulator>, Json(b): Json<Hook>| async move {
                s.set_webhook(&b.url, &b.secret);
                Json(json!({"ok": true}))
            }),
        )
        .route(
            "/_sim/faults",
            put(|State(s): State<Simulator>, Json(b): Json<Faults>| async move {
                s.set_faults(b);
                Json(json!({"ok": true}))
            }),
        )
        .route(
            "/_sim/rate-limit",
            put(|State(s): State<Simulator>, Json(b): Json<Limit>| async move {
                s.set_rate_limit(b.remaining, b.reset_in_secs);
                Json(json!({"ok": true}))
            }),
        )
        .route(
            "/_sim/counters",
            get(|State(s): State<Simulator>| async move { Json(s.counters()) }),
        )
        .route(
            "/_sim/counters/reset",
            post(|State(s): State<Simulator>| async move {
                s.reset_counters();
                Json(json!({"ok": true}))
            }),
        )
        .route("/_sim/health", patch(|| async { "ok" }).get(|| async { "ok" }))
        .with_state(sim)
}
