//! The API suite: the real server on loopback, over SQLite and PostgreSQL.

// Shared by every suite module; no single module uses every helper.
#[allow(dead_code)]
mod support;

mod access;
mod access_agents;
mod access_auth;
mod access_checkouts;
mod agent_processes;
mod agent_replies;
mod agents_api;
mod approval_binding;
mod automations_api;
mod automations_home;
mod automations_yaml;
mod board_cache;
mod bounds;
mod check_reruns;
mod cluster;
mod coordination;
mod engine;
mod evaluation_trace;
mod fire_writes_run;
mod github_api;
mod github_lag;
mod github_moves;
mod github_support;
mod github_sweep;
mod live_replicas;
mod logs;
mod lone_writes;
mod merge_github;
mod merge_lag;
mod merge_methods;
mod merge_races;
mod merge_settings;
mod merge_state;
mod merged_detection;
mod merged_engine;
mod merged_scoping;
mod merger_api;
mod notifications;
mod overload;
mod pinned_checks;
mod repository_choice;
mod retention;
mod review_links;
mod run_starts;
mod session_tokens;
mod sim_openapi;
mod store_pools;
mod system_api;
mod tasks_api;
mod trigger_index;
mod trigger_types;
mod workspaces_api;
