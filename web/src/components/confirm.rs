//! A confirmation dialog (a native `<dialog>`-like overlay).

use leptos::prelude::*;

use crate::i18n::t;

#[component]
pub fn Confirm(
    #[prop(into)] open: RwSignal<bool>,
    #[prop(into)] title: Signal<String>,
    #[prop(into)] body: Signal<String>,
    #[prop(into)] confirm_label: Signal<String>,
    on_confirm: impl Fn() + Clone + Send + Sync + 'static,
) -> impl IntoView {
    view! {
        <Show when=move || open.get()>
            <div class="overlay">
                <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="confirm-title" aria-describedby="confirm-body">
                    <h2 id="confirm-title">{move || title.get()}</h2>
                    <p id="confirm-body">{move || body.get()}</p>
                    <div class="row">
                        <button class="btn" on:click=move |_| open.set(false)>{move || t("cancel")}</button>
                        <button class="btn btn-danger" on:click={
                            let on_confirm = on_confirm.clone();
                            move |_| {
                                open.set(false);
                                on_confirm();
                            }
                        }>{move || confirm_label.get()}</button>
                    </div>
                </div>
            </div>
        </Show>
    }
}
