# What the merger says: how a merge ended, why it blocked, what it waits
# for, and its progress. The English matches the server's byte for byte
# (a test checks it); arguments are check names, SHAs and GitHub's words.

merger-already-merged = PR already merged
merger-merged = Merged PR #{ $number }
merger-queue-merged = Merged PR #{ $number } through the merge queue
merger-closed-unmerged = PR closed without merge
merger-draft = PR is draft
merger-conflict = merge conflict, manual rebase needed
merger-unknown-after-error = merge state unknown after a GitHub error; check the PR
merger-fell-behind-again = the branch fell behind its base again after { $count } { $count ->
        [one] update
       *[other] updates
    }; update it and approve again
merger-fork-locked = the branch is behind its base and its fork does not allow edits from maintainers; update it in the fork and approve again
merger-changed-after-approval = the PR changed after approval (approved { $approved }, now { $head }); review it and approve again
merger-changed-too-large = the PR's head moved after approval (approved { $approved }, now { $head }) and its diff is too large to compare; review it and approve again
merger-ci-failing = CI failing: { $checks }
merger-queue-timeout = still in the merge queue after { $minutes } min (position { $position })
merger-dequeued = removed from the merge queue: { $reason }
merger-dequeued-silently = removed from the merge queue: GitHub gave no reason
merger-update-timeout = GitHub had not updated the branch after { $minutes } min; update it and approve again
merger-checks-timeout = checks still pending after { $minutes } min: { $pending }
merger-reviews-timeout = reviews still missing after { $minutes } min: { $missing }
merger-blocked-timeout = GitHub still reports the merge blocked after { $minutes } min, by a requirement GitHub does not name (blocked)
merger-requirements-timeout = still missing after { $minutes } min: { $missing }
merger-kept-failing = GitHub kept failing for { $minutes } min (last: { $last }); check the PR
merger-token-refused = GitHub answered 401 reading { $reading }: the token was refused
merger-forbidden = GitHub answered 403 reading { $reading }: { $message }
merger-not-found = GitHub answered 404 reading { $reading }: it does not exist, or the token cannot see it
merger-not-configured = GitHub is not configured: set GITHUB_TOKEN
merger-unusable = GitHub's answer reading { $reading } was unusable: { $error }
merger-update-failed = could not update the branch: { $error }
merger-not-merged = GitHub did not merge the PR: { $message }
merger-merge-refused = GitHub refused the merge: { $message }
merger-no-merge-method = GitHub allows none of the merge methods here (it refused { $refused }): { $message }
merger-rules-allow-no-method = the branch's rulesets together allow no merge method
merger-merge-failed = merge failed: { $error }
merger-enqueue-refused = GitHub refused to add the PR to the merge queue: { $message }
merger-enqueue-failed = could not add the PR to the merge queue: { $error }
merger-check = { $name }
merger-check-link = { $name } { $url }
merger-check-only-app = { $name } (only GitHub App { $app }'s report counts)
merger-mergeability = mergeability
merger-awaiting-update = the branch update
merger-queue-position = the merge queue (position { $position })
merger-reviews = reviews: { $missing }
merger-reviews-unnamed = reviews: a requirement GitHub does not name (blocked)
merger-changes-requested = a reviewer requested changes
merger-approvals-missing = { $count } more { $count ->
        [one] approving review
       *[other] approving reviews
    } ({ $approvals } of { $required } required)
merger-review-required = an approving review (GitHub reports review required)
merger-last-push-review = an approval of the latest push, by someone other than its pusher (the branch's rules require one after every push, a branch update included)
merger-code-owner-review = an approval from a code owner of the files it changes (the branch's rules require one)
merger-code-owner-review-from = an approval from a code owner of the files it changes, asked of { $owners } (the branch's rules require one)
merger-deployment = a successful deployment to { $environment } (the branch's rules require one of the head)
merger-unresolved-threads = { $count } { $count ->
        [one] unresolved review thread
       *[other] unresolved review threads
    }
merger-reading-pr = the PR { $pr }
merger-reading-protection = the branch protection of { $pr }
merger-reading-rulesets = the rulesets of { $pr }
merger-reading-checks = the checks of { $pr }
merger-reading-queue = the merge queue of { $pr }
merger-reading-reviews = the reviews of { $pr }
merger-reading-deployments = the deployments of { $pr }
merger-reading-diff = the diff of { $pr }
merger-reading-approved = the approved commit { $approved } of { $pr }
merger-reading-update = an update of the branch
merger-waiting = waiting for { $pending } on { $sha }
merger-updating-branch = bringing { $head } up to date with { $base }
merger-head-moved = the head moved; checking again
merger-base-moved = the base branch moved during the merge; checking again
merger-method-refused = { $method } merges are not allowed here; trying another method
merger-merging = { $method } merge of { $sha }
merger-enqueuing = adding { $sha } to the merge queue
merger-queued = in the merge queue at position { $position }
