//! The OpenAPI document, generated from the handlers and the core API types.

use utoipa::OpenApi;

use super::{agents, automations, github, tasks, workspaces};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Kandev API",
        version = "1",
        description = "The Kandev HTTP API (v1). Errors are {\"error\": {\"code\", \"message\"}}."
    ),
    paths(
        workspaces::create,
        workspaces::list,
        workspaces::show,
        workspaces::create_repository,
        workspaces::list_repositories,
        tasks::create,
        tasks::list,
        tasks::show,
        tasks::patch,
        tasks::delete,
        tasks::archive,
        tasks::unarchive,
        tasks::add_comment,
        tasks::comments,
        tasks::events,
        tasks::review,
        tasks::approve,
        tasks::reject,
        automations::trigger_types,
        automations::list,
        automations::create,
        automations::show,
        automations::patch,
        automations::delete,
        automations::add_trigger,
        automations::patch_trigger,
        automations::delete_trigger,
        automations::run_now,
        automations::runs,
        automations::delete_runs,
        automations::workspace_runs,
        automations::delete_run,
        automations::evaluations,
        automations::webhook_secret,
        automations::webhook,
        agents::list,
        agents::create,
        agents::sessions,
        agents::messages,
        agents::reply,
        github::link_pr,
        github::list_prs,
        github::refresh_prs,
        github::detach_pr,
        github::restore_pr,
        github::workspace_task_prs,
        github::orgs,
        github::search_repos,
        github::get_settings,
        github::put_settings,
        github::webhook,
    ),
    components(schemas(kandev_core::api::ApiError, kandev_core::api::ErrorBody))
)]
pub struct ApiDoc;
