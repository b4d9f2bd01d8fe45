//! A link whose repository was renamed or transferred on GitHub moves to the
//! name GitHub now reports, with everything keyed by that name, in the
//! caller's transaction (so a crash keeps either the old name or the new).

use kandev_core::merged::dedup_key;
use kandev_core::task_pr::TaskPr;
use sqlx::AnyConnection;

use super::StoreResult;
use super::task_prs::pr_key;

/// Moves `from`'s link row (its task, the name it was read under) to `to`'s
/// name. Where the task already links the new name, the old row goes instead
/// of making a second link. The task's merger job follows the name, and the
/// merged trigger's dedup key follows the link, so a later event under the
/// new name cannot fire a second time for the same merge.
pub async fn move_on(conn: &mut AnyConnection, from: &TaskPr, to: &TaskPr) -> StoreResult<()> {
    let (old_key, new_key) = (
        pr_key(&from.owner, &from.repo, from.pr_number),
        pr_key(&to.owner, &to.repo, to.pr_number),
    );
    sqlx::query(
        "DELETE FROM task_prs WHERE task_id = $1 AND pr_key = $2 \
         AND EXISTS (SELECT 1 FROM task_prs n WHERE n.task_id = $1 AND n.pr_key = $3)",
    )
    .bind(&from.task_id)
    .bind(&old_key)
    .bind(&new_key)
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE task_prs SET pr_key = $3, owner = $4, repo = $5 WHERE task_id = $1 AND pr_key = $2")
        .bind(&from.task_id)
        .bind(&old_key)
        .bind(&new_key)
        .bind(&to.owner)
        .bind(&to.repo)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE merger_jobs SET owner = $2, repo = $3 \
         WHERE task_id = $1 AND lower(owner) = lower($4) AND lower(repo) = lower($5) AND pr_number = $6",
    )
    .bind(&from.task_id)
    .bind(&to.owner)
    .bind(&to.repo)
    .bind(&from.owner)
    .bind(&from.repo)
    .bind(from.pr_number)
    .execute(&mut *conn)
    .await?;
    // The key is unique per automation: a run already under the new key stays as it is.
    sqlx::query(
        "UPDATE automation_runs SET dedup_key = $2 WHERE dedup_key = $1 \
         AND NOT EXISTS (SELECT 1 FROM automation_runs o WHERE o.automation_id = automation_runs.automation_id AND o.dedup_key = $2)",
    )
    .bind(dedup_key(from))
    .bind(dedup_key(to))
    .execute(&mut *conn)
    .await?;
    Ok(())
}
