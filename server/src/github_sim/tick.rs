//! The world moving on its own, as GitHub's does between requests: accepted
//! branch updates land, CI reports on new commits, merge queues test their
//! front entries on a merge group and merge or eject them.

use std::time::Duration;

use chrono::Utc;
use serde_json::Value;

use super::Simulator;
use super::check_apps::CheckReport;
use super::compare::DiffChange;
use super::rules::{Verdict, requirement_verdict};
use super::state::SimState;
use super::webhooks;

/// How often the world moves.
pub const TICK: Duration = Duration::from_millis(25);

type Deliveries = Vec<(&'static str, Option<Value>)>;

impl Simulator {
    /// Runs every due change; webhooks go out after the world is unlocked.
    pub fn tick(&self) {
        let deliveries = {
            let mut s = self.lock();
            let mut out = Deliveries::new();
            land_updates(&mut s, &mut out);
            run_ci(&mut s, &mut out);
            run_queues(&mut s, &mut out);
            out
        };
        for (event, payload) in deliveries {
            self.deliver(event, payload);
        }
    }
}

fn land_updates(s: &mut SimState, out: &mut Deliveries) {
    let now = Utc::now();
    let due: Vec<(String, String, i64)> = s
        .repos
        .values()
        .flat_map(|r| {
            r.prs
                .values()
                .filter(|p| p.update_lands_at.is_some_and(|t| t <= now))
                .map(|p| (r.owner.clone(), r.name.clone(), p.number))
        })
        .collect();
    for (o, r, n) in due {
        let sha = s.new_sha();
        let Some(pr) = s.pr_mut(&o, &r, n) else { continue };
        pr.update_lands_at = None;
        pr.behind = false;
        let (before, change) = (
            pr.head_sha.clone(),
            if pr.base_touches_files {
                DiffChange::Rewrite
            } else {
                DiffChange::Same
            },
        );
        s.carry_diff(&o, &r, &before, &sha, change);
        s.head_moved(&o, &r, n, sha, super::state::TOKEN_USER);
        out.push(("pull_request", webhooks::pull_request(s, &o, &r, n, "synchronize")));
    }
}

fn run_ci(s: &mut SimState, out: &mut Deliveries) {
    let now = Utc::now();
    let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut s.ci_due).into_iter().partition(|x| x.3 <= now);
    s.ci_due = later;
    for (o, r, sha, _) in due {
        let Some(ci) = s.repo(&o, &r).and_then(|x| x.auto_ci.clone()) else {
            continue;
        };
        for check in &ci.checks {
            let id = s.next_id();
            if let Some(repo) = s.repo_mut(&o, &r) {
                repo.put_check_run(&sha, id, &CheckReport::new(check, "completed", Some(&ci.conclusion)));
            }
            let branch = s
                .repo(&o, &r)
                .and_then(|x| x.prs.values().find(|p| p.head_sha == sha).map(|p| p.head_ref.clone()))
                .unwrap_or_default();
            out.push(("check_run", webhooks::check_run(s, &o, &r, &sha, &branch, id)));
        }
    }
}

fn run_queues(s: &mut SimState, out: &mut Deliveries) {
    let fronts: Vec<(String, String, i64)> = s
        .repos
        .values()
        .flat_map(|r| {
            let mut bases: Vec<&str> = r
                .prs
                .values()
                .filter(|p| p.queue.is_some() && p.state == "open")
                .map(|p| p.base_ref.as_str())
                .collect();
            bases.dedup();
            bases
                .into_iter()
                .filter_map(|b| {
                    r.prs
                        .values()
                        .filter(|p| p.base_ref == b && p.state == "open" && p.queue.is_some())
                        .min_by_key(|p| p.queue.as_ref().map(|e| e.id))
                        .map(|p| (r.owner.clone(), r.name.clone(), p.number))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for (o, r, n) in fronts {
        let group = s
            .repo(&o, &r)
            .and_then(|x| x.prs.get(&n))
            .and_then(|p| p.queue.as_ref())
            .and_then(|e| e.merge_group_sha.clone());
        let Some(group) = group else {
            // The entry reaches the front: GitHub builds its merge group.
            let sha = s.new_sha();
            if let Some(e) = s.pr_mut(&o, &r, n).and_then(|p| p.queue.as_mut()) {
                e.merge_group_sha = Some(sha.clone());
            }
            s.start_ci(&o, &r, &sha);
            continue;
        };
        let Some(repo) = s.repo(&o, &r) else { continue };
        let Some(pr) = repo.prs.get(&n) else { continue };
        let checks = repo.latest_checks(&group);
        let required = repo.all_required_checks(&pr.base_ref);
        let failed: Vec<&str> = required
            .iter()
            .filter(|req| requirement_verdict(&checks, req) == Some(Verdict::Failure))
            .map(|req| req.context.as_str())
            .collect();
        if !failed.is_empty() {
            let reason = format!(
                "Required status checks failed on the merge group: {}",
                failed.join(", ")
            );
            if let Some(pr) = s.pr_mut(&o, &r, n) {
                pr.queue = None;
                pr.dequeued_reason = Some(reason);
            }
            continue;
        }
        let green = required
            .iter()
            .all(|req| requirement_verdict(&checks, req) == Some(Verdict::Success));
        if green {
            let sha = s.new_sha();
            s.close_merged(&o, &r, n, sha, "squash");
            s.counters.merges += 1;
            out.push(("pull_request", webhooks::pull_request(s, &o, &r, n, "closed")));
        }
    }
}
