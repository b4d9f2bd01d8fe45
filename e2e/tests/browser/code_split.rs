//! The first page carries only the board: the editor's code is a separate
//! chunk, fetched when the editor is first opened, and the editor then works.
//! The task page's code comes while the board idles, so opening a card
//! fetches no code at all.
//! A chunk that cannot be loaded (the server was upgraded under an open page,
//! or the network failed) reloads the app once, then says so.
//! The first route a page loads comes as one merged module, and a route
//! loaded after it never loads again what that module held.

use std::time::Duration;

use anyhow::ensure;
use kandev_e2e::{Ctx, eventually, scenario};
use serde_json::json;

use crate::support::*;

/// The app's code the page fetched since the last call: wasm files and
/// route packs (a route's module and chunks in one file).
async fn wasm_fetched(ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    Ok(ctx
        .browser
        .requests()
        .await?
        .into_iter()
        .filter(|u| u.ends_with(".wasm") || u.ends_with(".bin"))
        .collect())
}

/// GIVEN the built app, WHEN the board is opened, THEN only the main module
/// is fetched; WHEN the editor is opened, THEN its code is fetched in one
/// request and the editor renders.
async fn board_first_editor_on_demand(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    ctx.stack.task(&ws, "Split me", "todo").await?;
    wasm_fetched(&ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Split me").await?;
    let board = wasm_fetched(&ctx).await?;
    // Besides the main module, only the task page's code (its split module
    // and the shared chunks it needs), which an idle board fetches: a
    // previous page's prefetch may land in this log too.
    let task_page =
        |u: &String| u.contains("task_detail_route") || u.rsplit('/').next().is_some_and(|f| f.starts_with("chunk_"));
    ensure!(
        board.iter().any(|u| u.ends_with("/kandev_web_bg.wasm"))
            && board.iter().all(|u| u.ends_with("/kandev_web_bg.wasm") || task_page(u)),
        "the board fetched more than the main module and, once idle, the task page: {board:?}"
    );
    open_new_editor(&ctx, &ws).await?;
    let editor = wasm_fetched(&ctx).await?;
    ensure!(
        editor.iter().any(|u| u.contains("automation_editor_route")),
        "the editor's chunk was not fetched: {editor:?}"
    );
    // Its module and its fifty-odd chunks come as one file (merged, as the
    // first route of the page): a phone on a slow network pays its latency
    // once, not once per six files.
    // (Opening it by address loads the main module again, and the board's
    // idle prefetch of the task page may land here too.)
    let own: Vec<&String> = editor
        .iter()
        .filter(|u| !u.contains("task_detail_route") && !u.ends_with("/kandev_web_bg.wasm"))
        .collect();
    ensure!(
        own.len() == 1 && own[0].contains("/cold_automation_editor_route"),
        "the editor's code took more than one request: {editor:?}"
    );
    pick_condition(&ctx, "github_pr_merged").await?;
    // API refusals before sign-in are expected; a script or wasm error is not.
    let errors: Vec<String> = (ctx.browser.console().await.into_iter())
        .filter(|l| l.contains("SEVERE") && !l.contains("/api/v1/"))
        .collect();
    ensure!(errors.is_empty(), "console errors: {errors:?}");
    Ok(())
}
scenario!(
    the_board_loads_without_the_editor_and_the_editor_loads_on_demand,
    super::board_first_editor_on_demand
);

/// GIVEN a page opened by its address, THEN the main module, the chunk
/// loader and its route's merged module are asked for by the page itself,
/// beside its script (a `preload` the loader then takes over), each fetched
/// once; a page that needs no route code preloads none.
async fn a_page_opened_by_address_preloads_its_pack(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let packs = "return performance.getEntriesByType('resource')\
                 .filter((e) => e.name.includes('/pack_') || e.name.includes('/cold_'))\
                 .map((e) => [e.name.split('/').pop(), e.initiatorType])";
    // Cold, and with a round trip long enough to tell "beside the script"
    // from "after it" below.
    ctx.browser.cdp("Network.enable", json!({})).await?;
    ctx.browser.cdp("Network.clearBrowserCache", json!({})).await?;
    let latency = |ms: u32| json!({"offline": false, "latency": ms, "downloadThroughput": -1, "uploadThroughput": -1});
    ctx.browser
        .cdp("Network.emulateNetworkConditions", latency(100))
        .await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_for(".columns").await?;
    ctx.browser.cdp("Network.emulateNetworkConditions", latency(0)).await?;
    // The main module too is asked for by the page, beside its script.
    let main = ctx
        .browser
        .js(
            "return performance.getEntriesByType('resource')\
             .filter((e) => e.name.endsWith('/kandev_web_bg.wasm')).map((e) => e.initiatorType)",
            vec![],
        )
        .await?;
    ensure!(
        main == serde_json::json!(["link"]),
        "the main module was not preloaded once: {main}"
    );
    // So is the chunk loader, which the script imports: asked for before the
    // script has arrived, not one round trip after it.
    let loader = ctx
        .browser
        .js(
            "const r = performance.getEntriesByType('resource'); \
             const script = r.find((e) => e.name.endsWith('/kandev_web.js')); \
             return r.filter((e) => e.name.endsWith('/__wasm_split.js')).map((e) => e.startTime < script.responseEnd)",
            vec![],
        )
        .await?;
    ensure!(
        loader == serde_json::json!([true]),
        "the chunk loader was not asked for once, beside the script: {loader}"
    );
    let board = ctx.browser.js(packs, vec![]).await?;
    ensure!(
        board.as_array().is_some_and(|a| a.iter().all(|p| p[1] != "link")),
        "the board preloaded a route's code: {board}"
    );
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, "github_pr_merged").await?;
    let editor = ctx.browser.js(packs, vec![]).await?;
    let entries = editor.as_array().cloned().unwrap_or_default();
    ensure!(
        entries.len() == 1
            && entries[0][0]
                .as_str()
                .is_some_and(|n| n.starts_with("cold_automation_editor_route"))
            && entries[0][1] == "link",
        "the editor's merged module was not preloaded once by the page: {editor}"
    );
    Ok(())
}
scenario!(
    a_page_opened_by_its_address_preloads_its_routes_code_once,
    super::a_page_opened_by_address_preloads_its_pack
);

/// Counts the page's wasm instantiations and keeps the function table the
/// split modules fill (from the imports they are instantiated with).
const COUNT_INSTANTIATIONS: &str = "window.__kandev_modules = 0; \
    const instantiate = WebAssembly.instantiateStreaming; \
    WebAssembly.instantiateStreaming = function (src, imports) { \
        window.__kandev_modules += 1; \
        if (imports && imports.__wasm_split) window.__kandev_table = imports.__wasm_split.__indirect_function_table; \
        return instantiate.call(WebAssembly, src, imports); \
    };";

/// GIVEN the editor opened by its address, THEN its code is instantiated as
/// one module; WHEN the board and then a task page open inside the app,
/// THEN the task page takes its code from its pack, and no table slot the
/// editor's module filled is filled again (no module instantiated twice).
async fn a_route_after_a_merged_one_loads_only_what_it_lacks(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "After the editor", "todo").await?;
    ctx.browser
        .cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": COUNT_INSTANTIATIONS }),
        )
        .await?;
    open_new_editor(&ctx, &ws).await?;
    pick_condition(&ctx, "github_pr_merged").await?;
    let editor = ctx.browser.js("return window.__kandev_modules;", vec![]).await?;
    // The main module and the editor's merged module.
    ensure!(editor == json!(2), "the editor took {editor} instantiations, not 2");
    ctx.browser
        .js(
            "const t = window.__kandev_table; \
             window.__kandev_slots = Array.from({ length: t.length }, (_, i) => t.get(i));",
            vec![],
        )
        .await?;
    ctx.browser
        .js(
            &format!("document.querySelector(\"a[href='/w/{ws}']\").click();"),
            vec![],
        )
        .await?;
    ctx.browser.wait_text(".columns", "After the editor").await?;
    ctx.browser
        .js(
            &format!("document.querySelector(\".task-card[data-task-id='{task}'] a\").click();"),
            vec![],
        )
        .await?;
    ctx.browser.wait_for("#delete-task").await?;
    let after = ctx
        .browser
        .js(
            "const t = window.__kandev_table; \
             const changed = window.__kandev_slots.filter((f, i) => f !== null && t.get(i) !== f).length; \
             const code = performance.getEntriesByType('resource').map((e) => e.name.split('/').pop()) \
                 .filter((n) => n.endsWith('.wasm') || n.endsWith('.bin')); \
             return [window.__kandev_modules, changed, code];",
            vec![],
        )
        .await?;
    ensure!(
        after[1] == json!(0),
        "slots the editor's module filled were filled again: {after}"
    );
    ensure!(
        after[0].as_u64().is_some_and(|n| n > 2),
        "the task page instantiated nothing of its own: {after}"
    );
    let code: Vec<&str> = after[2]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    ensure!(
        code.iter().any(|n| n.starts_with("pack_task_detail_route"))
            && !code
                .iter()
                .any(|n| n.starts_with("cold_task_detail_route") || n.starts_with("chunk_")),
        "the task page's code did not come from its pack alone: {code:?}"
    );
    Ok(())
}
scenario!(
    a_route_opened_after_a_merged_route_loads_only_the_modules_it_lacks,
    super::a_route_after_a_merged_one_loads_only_what_it_lacks
);

/// GIVEN the board has shown its cards and idled, THEN the task page's code
/// has been fetched; WHEN a card is opened, THEN its page shows without
/// fetching any more code.
async fn idle_board_readies_the_task_page(ctx: Ctx) -> anyhow::Result<()> {
    let ws = workspace(&ctx).await?;
    let task = ctx.stack.task(&ws, "Open me", "todo").await?;
    wasm_fetched(&ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_text(".columns", "Open me").await?;
    let fetched = std::sync::Mutex::new(Vec::<String>::new());
    eventually(
        "the task page's code, fetched while idle",
        Duration::from_secs(15),
        || async {
            let new = wasm_fetched(&ctx).await.ok()?;
            let mut all = fetched.lock().ok()?;
            all.extend(new);
            all.iter().any(|u| u.contains("task_detail_route")).then_some(())
        },
    )
    .await?;
    // Whatever else the prefetch needs arrives with it, not on the click.
    tokio::time::sleep(Duration::from_millis(500)).await;
    wasm_fetched(&ctx).await?;
    ctx.browser
        .click(&format!(".task-card[data-task-id='{task}'] a"))
        .await?;
    ctx.browser.wait_for("#delete-task").await?;
    let opened = wasm_fetched(&ctx).await?;
    ensure!(opened.is_empty(), "opening the card fetched code: {opened:?}");
    Ok(())
}
scenario!(
    an_idle_board_readies_the_task_page_so_opening_a_card_fetches_no_code,
    super::idle_board_readies_the_task_page
);

/// From the board, with the code matching `blocked` unreachable, runs `open`
/// (JavaScript that leaves for a page needing that code); THEN the app
/// reloads once and says so; WHEN the code is reachable again, THEN the
/// notice's Reload link opens the page (`ready` shows).
async fn blocked_code_reloads_once_then_recovers(
    ctx: &Ctx,
    blocked: &str,
    open: &str,
    ready: &str,
) -> anyhow::Result<()> {
    let ws = workspace(ctx).await?;
    ctx.browser.goto(&format!("/w/{ws}")).await?;
    ctx.browser.wait_for(".columns").await?;
    ctx.browser.block_requests(&[blocked]).await?;
    // A mark on this page: a reload clears it.
    ctx.browser
        .js(
            &format!("window.__kandev_before = true; {}", open.replace(":ws", &ws)),
            vec![],
        )
        .await?;
    ctx.browser.wait_for("#load-failed").await?;
    let before = ctx
        .browser
        .js(
            "return [window.__kandev_before === true, sessionStorage.getItem('kandev-chunk-reload') !== null];",
            vec![],
        )
        .await?;
    // The reload happened, and the page remembers it for a minute.
    ensure!(
        before == json!([false, true]),
        "the notice came without a reload first: {before}"
    );
    let notice = ctx.browser.text("#load-failed").await?;
    ensure!(notice.contains("could not be loaded"), "{notice}");
    ctx.browser.unblock_requests().await?;
    ctx.browser.click("#load-failed a").await?;
    ctx.browser.wait_for(ready).await?;
    Ok(())
}

/// GIVEN the board is open, WHEN the automations page's chunk cannot be
/// fetched, THEN the app reloads once; WHEN it fails again, THEN a notice
/// says so and its Reload link, once the network is back, opens the page.
async fn a_chunk_that_fails_reloads_once_then_says_so(ctx: Ctx) -> anyhow::Result<()> {
    blocked_code_reloads_once_then_recovers(
        &ctx,
        "*automations_overview_route*",
        "document.querySelector(\"a[href='/automations']\").click();",
        "#agenda-title",
    )
    .await
}
scenario!(
    a_page_whose_code_cannot_be_loaded_reloads_once_then_offers_a_reload,
    super::a_chunk_that_fails_reloads_once_then_says_so
);

/// GIVEN the editor opened by its address while its merged module cannot be
/// fetched, THEN the app reloads once and then says so; WHEN the network is
/// back, THEN the notice's Reload link opens the editor.
async fn a_merged_module_that_fails_reloads_once_then_says_so(ctx: Ctx) -> anyhow::Result<()> {
    // A page load by address (`goto` would wait for a page that never comes).
    blocked_code_reloads_once_then_recovers(
        &ctx,
        "*cold_automation_editor_route*",
        "location.assign('/settings/workspace/:ws/automations/new');",
        "#automation-name",
    )
    .await?;
    pick_condition(&ctx, "github_pr_merged").await
}
scenario!(
    a_page_whose_merged_module_cannot_be_loaded_reloads_once_then_offers_a_reload,
    super::a_merged_module_that_fails_reloads_once_then_says_so
);
