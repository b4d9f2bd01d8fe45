use super::*;

#[test]
fn roles_order_from_viewer_to_owner_and_round_trip() {
    assert!(Role::Viewer < Role::Member && Role::Member < Role::Owner);
    for r in Role::ALL {
        assert_eq!(Role::parse(r.as_str()), Some(r));
    }
    assert_eq!(Role::parse("admin"), None);
}

#[test]
fn the_verdict_table_for_every_role_and_level() {
    use Level::*;
    use Verdict::*;
    let table = [
        (None, Read, Hidden),
        (None, Write, Hidden),
        (None, Manage, Hidden),
        (Some(Role::Viewer), Read, Allow),
        (Some(Role::Viewer), Write, Forbidden),
        (Some(Role::Viewer), Manage, Forbidden),
        (Some(Role::Member), Read, Allow),
        (Some(Role::Member), Write, Allow),
        (Some(Role::Member), Manage, Forbidden),
        (Some(Role::Owner), Read, Allow),
        (Some(Role::Owner), Write, Allow),
        (Some(Role::Owner), Manage, Allow),
    ];
    for (role, level, want) in table {
        assert_eq!(decide(false, role, level), want, "{role:?} {level:?}");
        assert_eq!(decide(true, role, level), Allow, "admin {role:?} {level:?}");
        assert_eq!(allows(false, role, level), want == Allow);
    }
}

#[test]
fn the_last_owner_cannot_leave_or_step_down() {
    assert!(!leaves_an_owner(1, true, None));
    assert!(!leaves_an_owner(1, true, Some(Role::Member)));
    assert!(leaves_an_owner(1, true, Some(Role::Owner)));
    assert!(leaves_an_owner(2, true, None));
    assert!(leaves_an_owner(1, false, None));
}

#[test]
fn routes_resolve_by_method_and_template() {
    assert_eq!(route_need("GET", "/healthz"), Some(Need::Open));
    assert_eq!(
        route_need("get", "/api/v1/tasks/{id}"),
        Some(Need::In(Scope::Task, Level::Read))
    );
    assert_eq!(
        route_need("PATCH", "/api/v1/tasks/{id}"),
        Some(Need::In(Scope::Task, Level::Write))
    );
    assert_eq!(route_need("DELETE", "/mcp"), Some(Need::Bearer));
    assert_eq!(route_need("PUT", "/api/v1/tasks/{id}"), None);
    assert_eq!(
        route_need("HEAD", "/api/v1/tasks/{id}"),
        route_need("GET", "/api/v1/tasks/{id}")
    );
    assert_eq!(methods_for("/api/v1/tasks/{id}"), vec!["GET", "PATCH", "DELETE"]);
    assert!(methods_for("/nowhere").is_empty());
    assert_eq!(route_need("GET", "/api/v1/nothing"), None);
}

#[test]
fn webhook_secrets_members_and_settings_are_for_owners() {
    for (m, t) in [
        ("GET", "/api/v1/automations/{id}/webhook-secret"),
        ("POST", "/api/v1/automations/{id}/webhook-secret/rotate"),
        ("PUT", "/api/v1/workspaces/{ws}/members/{user_id}"),
        ("PUT", "/api/v1/github/workspace-settings"),
        ("POST", "/api/v1/workspaces/{ws}/repositories"),
    ] {
        assert!(matches!(route_need(m, t), Some(Need::In(_, Level::Manage))), "{m} {t}");
    }
    for (m, t) in [
        ("POST", "/api/v1/agent-profiles"),
        ("PATCH", "/api/v1/agent-profiles/{id}"),
        ("POST", "/api/v1/users"),
    ] {
        assert_eq!(route_need(m, t), Some(Need::Admin), "{m} {t}");
    }
}

#[test]
fn every_route_is_listed_once() {
    let mut seen = std::collections::HashSet::new();
    for (m, t) in known_routes() {
        assert!(seen.insert((m, t)), "{m} {t} is listed twice");
        assert!(t.starts_with('/'), "{t}");
    }
}

#[test]
fn the_only_open_routes_are_the_contracts() {
    let open: Vec<(&str, &str)> = known_routes()
        .filter(|(m, t)| route_need(m, t) == Some(Need::Open))
        .collect();
    assert_eq!(
        open,
        vec![
            ("GET", "/healthz"),
            ("GET", "/metrics"),
            ("GET", "/api/v1/openapi.json"),
            ("POST", "/api/v1/auth/login"),
            ("POST", "/api/v1/auth/logout"),
            ("POST", "/api/v1/automations/webhook/{id}"),
            ("POST", "/api/v1/github/webhook"),
        ]
    );
}

#[test]
fn loopback_names_are_recognised() {
    for h in [
        "localhost",
        "LOCALHOST",
        "app.localhost",
        "127.0.0.1",
        "127.8.9.10",
        "[::1]",
        "localhost.",
    ] {
        assert!(is_loopback_host(h), "{h}");
    }
    for h in [
        "example.com",
        "127.0.0.1.evil.com",
        "localhost.evil.com",
        "128.0.0.1",
        "127.0.0.256",
        "10.0.0.1",
        "",
    ] {
        assert!(!is_loopback_host(h), "{h}");
    }
}

#[test]
fn a_foreign_host_is_refused_and_the_public_host_accepted() {
    let public = PublicOrigin::parse("https://Kandev.Example.com/").unwrap();
    assert_eq!(public.host, "kandev.example.com");
    assert_eq!(public.origin(), "https://kandev.example.com");
    assert!(public.is_https());
    assert!(host_allowed("127.0.0.1:38080", None));
    assert!(host_allowed("localhost:38080", None));
    assert!(host_allowed("[::1]:38080", None));
    assert!(!host_allowed("rebind.attacker.test:38080", None));
    assert!(!host_allowed("", None));
    assert!(host_allowed("kandev.example.com", Some(&public)));
    assert!(host_allowed("KANDEV.example.com:443", Some(&public)));
    assert!(!host_allowed("other.example.com", Some(&public)));
}

#[test]
fn public_urls_parse_with_their_ports() {
    let p = PublicOrigin::parse("http://kandev.lan:8080/app").unwrap();
    assert_eq!(p.origin(), "http://kandev.lan:8080");
    assert_eq!(
        PublicOrigin::parse("https://k.test:443").unwrap().origin(),
        "https://k.test"
    );
    assert_eq!(PublicOrigin::parse("http://[::1]:9000").unwrap().host, "[::1]");
    for bad in [
        "kandev.test",
        "ftp://k.test",
        "https://",
        "https://user@k.test",
        "http://k.test:99999",
    ] {
        assert!(PublicOrigin::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn only_the_servers_own_origin_may_send_cookie_writes() {
    assert!(origin_allowed("http://127.0.0.1:38080", "127.0.0.1:38080", None));
    assert!(!origin_allowed("http://127.0.0.1:9999", "127.0.0.1:38080", None));
    assert!(!origin_allowed("https://evil.test", "127.0.0.1:38080", None));
    assert!(!origin_allowed("null", "127.0.0.1:38080", None));
    let public = PublicOrigin::parse("https://kandev.example.com").unwrap();
    assert!(origin_allowed(
        "https://kandev.example.com",
        "kandev.example.com",
        Some(&public)
    ));
    assert!(!origin_allowed(
        "http://kandev.example.com",
        "kandev.example.com",
        Some(&public)
    ));
    assert!(!origin_allowed(
        "https://evil.test",
        "kandev.example.com",
        Some(&public)
    ));
}

#[test]
fn repeated_login_failures_wait_longer_up_to_a_cap() {
    for f in 0..=LOGIN_FREE_FAILURES {
        assert_eq!(login_delay_secs(f), 0);
    }
    assert_eq!(login_delay_secs(LOGIN_FREE_FAILURES + 1), 1);
    assert_eq!(login_delay_secs(LOGIN_FREE_FAILURES + 2), 2);
    assert_eq!(login_delay_secs(LOGIN_FREE_FAILURES + 4), 8);
    assert_eq!(login_delay_secs(1000), LOGIN_MAX_DELAY_SECS);
    assert_eq!(login_delay_secs(u32::MAX), LOGIN_MAX_DELAY_SECS);
}

#[test]
fn a_refused_sign_in_waits_what_its_failures_earn_or_a_moment_for_a_check_in_progress() {
    // The wait the failures earned, rounded up, never below a second.
    assert_eq!(login_retry_after_secs(LOGIN_FREE_FAILURES + 4, 7_200), 8);
    assert_eq!(login_retry_after_secs(LOGIN_FREE_FAILURES + 1, 400), 1);
    assert_eq!(login_retry_after_secs(LOGIN_FREE_FAILURES + 1, 0), 1);
    // More than the count earns: another attempt's check holds the name.
    assert_eq!(login_retry_after_secs(1, 14_000), 1);
    assert_eq!(login_retry_after_secs(LOGIN_FREE_FAILURES + 2, 12_000), 1);
    assert_eq!(login_retry_after_secs(u32::MAX, i64::MAX), 1);
    assert_eq!(login_retry_after_secs(u32::MAX, 300_000), LOGIN_MAX_DELAY_SECS);
    assert_eq!(login_retry_after_secs(2, i64::MIN), 1);
}

#[test]
fn usernames_are_normalised_and_bounded() {
    assert_eq!(normalise_username("Alice").unwrap(), "alice");
    assert!(normalise_username(" alice").is_err());
    assert_eq!(normalise_username("a.b_c-1").unwrap(), "a.b_c-1");
    assert!(normalise_username("").is_err());
    assert!(normalise_username("with space").is_err());
    assert!(normalise_username("ünïcode").is_err());
    assert!(normalise_username(&"x".repeat(65)).is_err());
}
