//! Access, walked route by route: every `(method, route)` the router serves
//! (read from the running server, so a new route is walked automatically) is
//! called with no credential, as a member of another workspace, as a viewer,
//! as a member and as an owner, and the status each gets is the contract's.

use kandev_core::access::{Level, Need, Role, Scope, route_need};
use kandev_core::run_status::RunStatus;
use kandev_server::access::credentials::hash_secret;
use kandev_server::store::{Credential, NewRun};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Db, Person, Reply, TestApp, spawn_app};

/// The people of the walk: `olga` owns W, `mia` and `vic` are its member and
/// viewer, `fred` owns another workspace and is nobody in W.
struct Cast {
    olga: Person,
    mia: Person,
    vic: Person,
    fred: Person,
}

/// One workspace's worth of resources, fresh for every route walked.
struct Fixture {
    ws: String,
    task: String,
    automation: String,
    trigger: String,
    run: String,
    session: String,
    profile: String,
    user: String,
}

async fn cast(app: &TestApp) -> Cast {
    let cast = Cast {
        olga: app.person("olga", false).await,
        mia: app.person("mia", false).await,
        vic: app.person("vic", false).await,
        fred: app.person("fred", false).await,
    };
    let r = app
        .request_as(
            Some(&cast.fred),
            Method::POST,
            "/api/v1/workspaces",
            Some(json!({"name": "Fred's"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    cast
}

async fn fixture(app: &TestApp, cast: &Cast, n: usize) -> Fixture {
    let r = app
        .request_as(
            Some(&cast.olga),
            Method::POST,
            "/api/v1/workspaces",
            Some(json!({"name": format!("W{n}")})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let ws = r.body["id"].as_str().expect("ws").to_string();
    app.add_member(&ws, &cast.mia, "member").await;
    app.add_member(&ws, &cast.vic, "viewer").await;
    app.repository(&ws, "acme", "api").await;
    let task = app.task(&ws, "T").await;
    let a = app
        .automation(
            &ws,
            json!({"name": "A", "triggers": [{"type": "webhook", "config": {}}]}),
        )
        .await;
    let automation = a["id"].as_str().expect("automation").to_string();
    let trigger = a["triggers"][0]["id"].as_str().expect("trigger").to_string();
    let s = app.services();
    let now = s.clock.now();
    let run = s
        .store
        .insert_run(
            &NewRun {
                automation_id: automation.clone(),
                trigger_id: trigger.clone(),
                trigger_type: "webhook".into(),
                task_id: String::new(),
                status: RunStatus::Failed,
                dedup_key: String::new(),
                trigger_data: json!({}),
                error_message: "fixture".into(),
                event_id: String::new(),
            },
            now,
        )
        .await
        .expect("run");
    let session = s
        .store
        .create_session(&task, "mock", "", now)
        .await
        .expect("session")
        .session
        .id;
    let p = app
        .post(
            "/api/v1/agent-profiles",
            json!({"name": format!("P{n}"), "command": "true"}),
        )
        .await;
    let profile = p.body["id"].as_str().expect("profile").to_string();
    let u = app
        .post(
            "/api/v1/users",
            json!({"username": format!("spare{n}"), "password": "password-1234"}),
        )
        .await;
    let user = u.body["id"].as_str().expect("user").to_string();
    Fixture {
        ws,
        task,
        automation,
        trigger,
        run,
        session,
        profile,
        user,
    }
}

/// The concrete path for a route template, naming the fixture's resources
/// (or `missing` ones, to see what a missing resource answers).
fn path_for(template: &str, need: Option<Need>, f: &Fixture, cast: &Cast, missing: bool) -> String {
    let pick = |real: &str| {
        if missing {
            "00000000-0000-0000-0000-00000000beef".to_string()
        } else {
            real.to_string()
        }
    };
    let id = match need {
        Some(Need::In(Scope::Task, _)) => pick(&f.task),
        Some(Need::In(Scope::Automation, _)) => pick(&f.automation),
        Some(Need::In(Scope::Trigger, _)) => pick(&f.trigger),
        Some(Need::In(Scope::Run, _)) => pick(&f.run),
        Some(Need::In(Scope::Session, _)) => pick(&f.session),
        _ if template.starts_with("/api/v1/users/") => f.user.clone(),
        _ if template.starts_with("/api/v1/agent-profiles/") => f.profile.clone(),
        _ if template.starts_with("/api/v1/automations/webhook/") => f.automation.clone(),
        _ => "no-such-token".into(),
    };
    let ws = if matches!(need, Some(Need::In(Scope::Workspace, _))) {
        pick(&f.ws)
    } else {
        f.ws.clone()
    };
    let mut path = template
        .replace("{ws}", &ws)
        .replace("{id}", &id)
        .replace("{user_id}", &cast.mia.id)
        .replace("{owner}", "acme")
        .replace("{repo}", "api")
        .replace("{number}", "1")
        .replace("{token}", "not-a-session-token")
        .replace("{*rest}", "v1/nothing/here");
    if let Some(Need::In(Scope::QueryWorkspace, _)) = need {
        path.push_str(&format!("?workspace_id={}&org=acme", pick(&f.ws)));
    }
    path
}

fn method_of(m: &str) -> Method {
    if m == "*" {
        Method::POST
    } else {
        Method::from_bytes(m.as_bytes()).expect("method")
    }
}

fn body_for(method: &Method) -> Option<Value> {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH).then(|| json!({}))
}

/// The 404 the guard gives for a resource the caller may not see.
fn hidden(need: Option<Need>) -> Option<String> {
    match need {
        Some(Need::In(scope, _)) => Some(format!("{} not found", scope.noun())),
        _ => None,
    }
}

/// Allowed through the guard: not refused for the credential or the role, and
/// no 404 worded as the guard's.
fn admitted(r: &Reply, need: Option<Need>, what: &str) {
    assert!(
        ![StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN].contains(&r.status),
        "{what}: refused with {} {}",
        r.status,
        r.body
    );
    if r.status == StatusCode::NOT_FOUND
        && let Some(h) = hidden(need)
    {
        assert_ne!(r.body["error"]["message"], h, "{what}: hidden from an allowed caller");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_each_caller_as_the_contract_says() {
    let app = spawn_app(Db::Sqlite).await;
    let cast = cast(&app).await;
    let routes = app.route_table();
    assert!(routes.len() > 60, "the router lists its routes: {routes:?}");
    for (n, (m, template)) in routes.iter().enumerate() {
        let need = route_need(m, template);
        assert!(need.is_some(), "{m} {template} has no access rule");
        let f = fixture(&app, &cast, n).await;
        let method = method_of(m);
        let what = format!("{m} {template}");
        let path = path_for(template, need, &f, &cast, false);
        let call = async |who: Option<&Person>| app.request_as(who, method.clone(), &path, body_for(&method)).await;

        let anonymous = call(None).await;
        match need {
            // Open routes check what they check themselves (a secret, a signature).
            Some(Need::Open) if *m == "GET" => assert_eq!(anonymous.status, StatusCode::OK, "{what}"),
            Some(Need::Open) => {}
            Some(Need::SessionToken) => assert_eq!(anonymous.status, StatusCode::NOT_FOUND, "{what}"),
            _ => {
                assert_eq!(
                    anonymous.status,
                    StatusCode::UNAUTHORIZED,
                    "{what} without a credential"
                );
                assert_eq!(anonymous.body["error"]["code"], "unauthenticated", "{what}");
            }
        }

        let foreign = call(Some(&cast.fred)).await;
        match need {
            Some(Need::In(..)) => {
                assert_eq!(
                    foreign.status,
                    StatusCode::NOT_FOUND,
                    "{what} from another workspace: {}",
                    foreign.body
                );
                let missing = app
                    .request(
                        method.clone(),
                        &path_for(template, need, &f, &cast, true),
                        body_for(&method),
                    )
                    .await;
                assert_eq!(missing.status, StatusCode::NOT_FOUND, "{what} for a missing resource");
                assert_eq!(
                    foreign.body, missing.body,
                    "{what}: hidden must read exactly as missing"
                );
            }
            Some(Need::Admin) => assert_eq!(foreign.status, StatusCode::FORBIDDEN, "{what}"),
            Some(Need::Signed) | Some(Need::Bearer) => admitted(&foreign, need, &what),
            _ => {}
        }

        let viewer = call(Some(&cast.vic)).await;
        match need {
            Some(Need::In(_, Level::Read)) => admitted(&viewer, need, &format!("{what} as viewer")),
            Some(Need::In(_, _)) | Some(Need::Admin) => {
                assert_eq!(
                    viewer.status,
                    StatusCode::FORBIDDEN,
                    "{what} as viewer: {}",
                    viewer.body
                );
                assert_eq!(viewer.body["error"]["code"], "forbidden", "{what}");
            }
            _ => {}
        }

        let member = call(Some(&cast.mia)).await;
        match need {
            Some(Need::In(_, Level::Manage)) | Some(Need::Admin) => {
                assert_eq!(
                    member.status,
                    StatusCode::FORBIDDEN,
                    "{what} as member: {}",
                    member.body
                )
            }
            Some(Need::In(..)) => admitted(&member, need, &format!("{what} as member")),
            _ => {}
        }

        if let Some(Need::In(_, Level::Manage)) = need {
            let owner = call(Some(&cast.olga)).await;
            admitted(&owner, need, &format!("{what} as owner"));
        }
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_routed_api_path_is_in_the_openapi_document_and_back() {
    let app = spawn_app(Db::Sqlite).await;
    let doc = app.get("/api/v1/openapi.json").await.body;
    let paths = doc["paths"].as_object().expect("paths");
    let routed: Vec<(String, String)> = app
        .route_table()
        .into_iter()
        // MCP speaks its own protocol; the catch-all only answers 404.
        .filter(|(_, t)| !t.starts_with("/mcp") && *t != "/api/{*rest}")
        .map(|(m, t)| (m.to_lowercase(), t.to_string()))
        .collect();
    for (m, t) in &routed {
        assert!(
            paths.get(t).and_then(|p| p.get(m)).is_some(),
            "{m} {t} is routed but not documented"
        );
    }
    for (t, item) in paths {
        for m in item.as_object().expect("item").keys() {
            assert!(
                routed.contains(&(m.clone(), t.clone())),
                "{m} {t} is documented but not routed"
            );
        }
    }
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["cookie"]["in"], "cookie");
    assert_eq!(doc["paths"]["/api/v1/auth/login"]["post"]["security"], json!([{}]));
    assert!(doc["paths"]["/api/v1/tasks/{id}"]["patch"]["responses"]["403"].is_object());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspaces_lists_only_the_callers_and_me_names_the_roles() {
    let app = spawn_app(Db::Sqlite).await;
    let cast = cast(&app).await;
    let f = fixture(&app, &cast, 0).await;
    let mine = app
        .request_as(Some(&cast.vic), Method::GET, "/api/v1/workspaces", None)
        .await;
    let ids: Vec<&str> = mine
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![f.ws.as_str()]);
    let fred = app
        .request_as(Some(&cast.fred), Method::GET, "/api/v1/workspaces", None)
        .await;
    assert!(fred.body.as_array().unwrap().iter().all(|w| w["id"] != f.ws.as_str()));
    let me = app.request_as(Some(&cast.vic), Method::GET, "/api/v1/me", None).await;
    assert_eq!(me.body["username"], "vic");
    assert_eq!(me.body["admin"], false);
    assert_eq!(
        me.body["workspaces"],
        json!([{"id": f.ws, "name": "W0", "role": "viewer"}])
    );
    let admin = app.get("/api/v1/me").await;
    assert_eq!(admin.body["admin"], true);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_owner_cannot_leave_or_step_down() {
    let app = spawn_app(Db::Sqlite).await;
    let cast = cast(&app).await;
    let f = fixture(&app, &cast, 0).await;
    let path = format!("/api/v1/workspaces/{}/members/{}", f.ws, cast.olga.id);
    let r = app.request_as(Some(&cast.olga), Method::DELETE, &path, None).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    let r = app
        .request_as(Some(&cast.olga), Method::PUT, &path, Some(json!({"role": "member"})))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    // With a second owner, the first may go.
    let by_name = format!("/api/v1/workspaces/{}/members/mia", f.ws);
    let r = app
        .request_as(Some(&cast.olga), Method::PUT, &by_name, Some(json!({"role": "owner"})))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["user_id"], cast.mia.id.as_str());
    let r = app.request_as(Some(&cast.olga), Method::DELETE, &path, None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    let gone = app
        .request_as(
            Some(&cast.olga),
            Method::GET,
            &format!("/api/v1/tasks/{}", f.task),
            None,
        )
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// Every scope with the fixture's resource it names.
fn scopes(f: &Fixture) -> [(Scope, &String); 7] {
    [
        (Scope::Workspace, &f.ws),
        (Scope::QueryWorkspace, &f.ws),
        (Scope::Task, &f.task),
        (Scope::Automation, &f.automation),
        (Scope::Trigger, &f.trigger),
        (Scope::Run, &f.run),
        (Scope::Session, &f.session),
    ]
}

/// The guard's one read: every scope's resource resolves to its workspace
/// with the caller's role there (none for a non-member or no user) and the
/// workspace's current board version; a missing resource resolves to nothing.
async fn one_read_places_each_scope_with_the_callers_role_and_the_board_version(db: Db) {
    let app = spawn_app(db).await;
    let cast = cast(&app).await;
    let f = fixture(&app, &cast, 0).await;
    let store = &app.services().store;
    let scopes = scopes(&f);
    let before = store.place(Scope::Workspace, &f.ws, None).await.unwrap().expect("ws");
    for (scope, id) in scopes {
        for (who, role) in [
            (Some(&cast.olga), Some(Role::Owner)),
            (Some(&cast.mia), Some(Role::Member)),
            (Some(&cast.vic), Some(Role::Viewer)),
            (Some(&cast.fred), None),
            (None, None),
        ] {
            let place = store
                .place(scope, id, who.map(|p| p.id.as_str()))
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{scope:?} {id} resolves"));
            assert_eq!(place.workspace_id, f.ws, "{scope:?}");
            assert_eq!(place.role, role, "{scope:?} as {:?}", who.map(|p| &p.username));
            assert_eq!(place.board_version, before.board_version, "{scope:?}");
        }
        let missing = store.place(scope, "missing", Some(&cast.olga.id)).await.unwrap();
        assert_eq!(missing, None, "{scope:?}: a missing resource");
    }
    app.task(&f.ws, "Another").await;
    let after = store.place(Scope::Task, &f.task, None).await.unwrap().expect("task");
    assert!(
        after.board_version > before.board_version,
        "a new task moves the board version"
    );
    app.stop().await;
}
crate::on_both_databases!(one_read_places_each_scope_with_the_callers_role_and_the_board_version);

/// A member's request reads the caller and the place together: each
/// credential (API token, browser session) at every scope names its user and
/// the same place `place` reads; a missing resource names the user and no
/// place; an unknown token or an expired session names nobody.
async fn one_read_admits_each_credential_with_the_place_of_each_scope(db: Db) {
    let app = spawn_app(db).await;
    let cast = cast(&app).await;
    let f = fixture(&app, &cast, 0).await;
    let store = &app.services().store;
    let now = app.services().clock.now();
    let session = "a-browser-session-id";
    let session_hash = hash_secret(session);
    store
        .create_web_session(&session_hash, &cast.vic.id, now, now + chrono::Duration::hours(1))
        .await
        .unwrap();
    let mia_hash = hash_secret(&cast.mia.token);
    let scopes = scopes(&f);
    for (credential, who) in [
        (Credential::ApiToken(&mia_hash), &cast.mia),
        (Credential::WebSession(&session_hash), &cast.vic),
    ] {
        for (scope, id) in scopes {
            let admitted = store
                .caller(credential, Some((scope, id)), now)
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("{credential:?} names {}", who.username));
            assert_eq!(admitted.user.id, who.id, "{scope:?}");
            let place = store.place(scope, id, Some(&who.id)).await.unwrap();
            assert!(place.is_some(), "{scope:?} resolves");
            assert_eq!(admitted.place, place, "{scope:?} as {}", who.username);
            let missing = store
                .caller(credential, Some((scope, "missing")), now)
                .await
                .unwrap()
                .expect("still the caller");
            assert_eq!((missing.user.id.as_str(), missing.place), (who.id.as_str(), None));
        }
        let alone = store
            .caller(credential, None, now)
            .await
            .unwrap()
            .expect("caller alone");
        assert_eq!((alone.user.id.as_str(), alone.place), (who.id.as_str(), None));
    }
    let nobody = hash_secret("kdv_not-a-token");
    assert_eq!(
        store
            .caller(Credential::ApiToken(&nobody), Some((Scope::Task, &f.task)), now)
            .await
            .unwrap(),
        None
    );
    let later = now + chrono::Duration::hours(2);
    assert_eq!(
        store
            .caller(
                Credential::WebSession(&session_hash),
                Some((Scope::Task, &f.task)),
                later
            )
            .await
            .unwrap(),
        None,
        "an expired session names nobody"
    );
    app.stop().await;
}
crate::on_both_databases!(one_read_admits_each_credential_with_the_place_of_each_scope);
