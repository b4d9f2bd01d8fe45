# Was der Merger sagt: wie ein Merge endete, warum er blockierte, worauf er
# wartet, und sein Fortschritt. Argumente sind Check-Namen, SHAs und
# GitHubs eigene Worte.

merger-already-merged = PR war bereits gemergt
merger-merged = PR #{ $number } gemergt
merger-queue-merged = PR #{ $number } über die Merge-Warteschlange gemergt
merger-closed-unmerged = PR ohne Merge geschlossen
merger-draft = PR ist ein Entwurf
merger-conflict = Merge-Konflikt, manuelles Rebase nötig
merger-unknown-after-error = Merge-Status nach einem GitHub-Fehler unbekannt; bitte den PR prüfen
merger-fell-behind-again = Der Branch ist nach { $count } { $count ->
        [one] Update
       *[other] Updates
    } erneut hinter seine Basis zurückgefallen; bitte aktualisieren und erneut freigeben
merger-fork-locked = der Branch liegt hinter seiner Basis und sein Fork erlaubt keine Änderungen durch Maintainer; aktualisiere ihn im Fork und gib ihn erneut frei
merger-changed-after-approval = der PR hat sich nach der Freigabe geändert (freigegeben { $approved }, jetzt { $head }); prüfe ihn und gib ihn erneut frei
merger-changed-too-large = der Head des PR hat sich nach der Freigabe bewegt (freigegeben { $approved }, jetzt { $head }) und sein Diff ist zu groß zum Vergleichen; prüfe ihn und gib ihn erneut frei
merger-ci-failing = CI schlägt fehl: { $checks }
merger-queue-timeout = nach { $minutes } Min. noch in der Merge-Warteschlange (Position { $position })
merger-dequeued = aus der Merge-Warteschlange entfernt: { $reason }
merger-dequeued-silently = aus der Merge-Warteschlange entfernt: GitHub nannte keinen Grund
merger-update-timeout = GitHub hat den Branch nach { $minutes } Min. nicht aktualisiert; bitte aktualisieren und erneut freigeben
merger-checks-timeout = Checks nach { $minutes } Min. noch ausstehend: { $pending }
merger-reviews-timeout = Reviews fehlen nach { $minutes } Min. noch: { $missing }
merger-blocked-timeout = GitHub meldet den Merge nach { $minutes } Min. weiterhin als blockiert, durch eine Anforderung, die GitHub nicht nennt
merger-requirements-timeout = fehlt nach { $minutes } Min. noch: { $missing }
merger-kept-failing = GitHub schlug { $minutes } Min. lang fehl (zuletzt: { $last }); bitte den PR prüfen
merger-token-refused = GitHub antwortete 401 ({ $reading }): das Token wurde abgelehnt
merger-forbidden = GitHub antwortete 403 ({ $reading }): { $message }
merger-not-found = GitHub antwortete 404 ({ $reading }): existiert nicht, oder das Token sieht es nicht
merger-not-configured = GitHub ist nicht eingerichtet: GITHUB_TOKEN setzen
merger-unusable = GitHubs Antwort ({ $reading }) war unbrauchbar: { $error }
merger-update-failed = Der Branch konnte nicht aktualisiert werden: { $error }
merger-not-merged = GitHub hat den PR nicht gemergt: { $message }
merger-merge-refused = GitHub hat den Merge abgelehnt: { $message }
merger-no-merge-method = GitHub erlaubt hier keine der Merge-Methoden (abgelehnt: { $refused }): { $message }
merger-rules-allow-no-method = die Rulesets des Branches erlauben zusammen keine Merge-Methode
merger-merge-failed = Merge fehlgeschlagen: { $error }
merger-enqueue-refused = GitHub hat den PR nicht in die Merge-Warteschlange aufgenommen: { $message }
merger-enqueue-failed = Der PR konnte nicht in die Merge-Warteschlange aufgenommen werden: { $error }
merger-check = { $name }
merger-check-link = { $name } { $url }
merger-check-only-app = { $name } (nur der Bericht der GitHub-App { $app } zählt)
merger-mergeability = Mergebarkeit
merger-awaiting-update = das Branch-Update
merger-queue-position = die Merge-Warteschlange (Position { $position })
merger-reviews = Reviews: { $missing }
merger-reviews-unnamed = Reviews: eine Anforderung, die GitHub nicht nennt
merger-changes-requested = ein Reviewer hat Änderungen angefordert
merger-approvals-missing = { $count } { $count ->
        [one] weiteres zustimmendes Review
       *[other] weitere zustimmende Reviews
    } ({ $approvals } von { $required } erforderlich)
merger-review-required = ein zustimmendes Review (GitHub verlangt ein Review)
merger-last-push-review = eine Zustimmung zum neuesten Push, von jemand anderem als dessen Autor (die Regeln des Branches verlangen sie nach jedem Push, auch nach einem Branch-Update)
merger-code-owner-review = eine Zustimmung eines Code-Owners der geänderten Dateien (die Regeln des Branches verlangen sie)
merger-code-owner-review-from = eine Zustimmung eines Code-Owners der geänderten Dateien, angefragt bei { $owners } (die Regeln des Branches verlangen sie)
merger-deployment = ein erfolgreiches Deployment nach { $environment } (die Regeln des Branches verlangen eines des Heads)
merger-unresolved-threads = { $count } { $count ->
        [one] offene Review-Diskussion
       *[other] offene Review-Diskussionen
    }
merger-reading-pr = PR { $pr }
merger-reading-protection = Branch-Schutz von { $pr }
merger-reading-rulesets = Rulesets von { $pr }
merger-reading-checks = Checks von { $pr }
merger-reading-queue = Merge-Warteschlange von { $pr }
merger-reading-reviews = Reviews von { $pr }
merger-reading-deployments = Deployments von { $pr }
merger-reading-diff = Diff von { $pr }
merger-reading-approved = freigegebener Commit { $approved } von { $pr }
merger-reading-update = Update des Branches
merger-waiting = warte auf { $pending } bei { $sha }
merger-updating-branch = bringe { $head } auf den Stand von { $base }
merger-head-moved = der Head hat sich bewegt; prüfe erneut
merger-base-moved = der Basis-Branch hat sich beim Merge bewegt; prüfe erneut
merger-method-refused = { $method }-Merges sind hier nicht erlaubt; versuche eine andere Methode
merger-merging = { $method }-Merge von { $sha }
merger-enqueuing = füge { $sha } der Merge-Warteschlange hinzu
merger-queued = in der Merge-Warteschlange auf Position { $position }
