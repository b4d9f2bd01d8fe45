//! Kandev's browser app (Leptos, client-side rendered).

use leptos::prelude::*;

#[component]
fn App() -> impl IntoView {
    view! {
        <main class="page">
            <h1>"Kandev"</h1>
            <p>"A task board for AI coding agents."</p>
        </main>
    }
}

pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}
