//! "Then": the task title (placeholder from the resolved condition's
//! default) and the instructions editor with `{{` completion and chips.

use kandev_core::editor::prompt::{Completion, accept, insert_at, open_completion, suggestions};
use kandev_core::editor::seeding_entry;
use leptos::html::Textarea;
use leptos::prelude::*;

use super::form::Form;
use crate::i18n::{t, ta};

fn cursor(area: &web_sys::HtmlTextAreaElement) -> usize {
    area.selection_start().ok().flatten().unwrap_or(0) as usize
}

#[component]
pub fn ThenSection(form: Form) -> impl IntoView {
    let condition = form.condition;
    let placeholders = Memo::new(move |_| seeding_entry(condition.get()).all_placeholders());
    let title_placeholder = move || {
        let default = seeding_entry(condition.get()).default_task_title;
        if default.is_empty() {
            ta("automations-task-title-default", &[("name", form.name.get())])
        } else {
            default.to_string()
        }
    };
    let area = NodeRef::<Textarea>::new();
    let open = RwSignal::new(None::<Completion>);
    let active = RwSignal::new(0usize);
    let refresh = move || {
        if let Some(el) = area.get() {
            open.set(open_completion(&el.value(), cursor(&el)));
            active.set(0);
        }
    };
    let options = move || {
        let list = placeholders.get();
        open.get()
            .map(|c| suggestions(&list, &c.prefix).into_iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let choose = move |key: String| {
        let (Some(el), Some(c)) = (area.get(), open.get_untracked()) else {
            return;
        };
        let (text, at) = accept(&el.value(), &c, cursor(&el), &key);
        form.prompt.set(text.clone());
        el.set_value(&text);
        let _ = el.set_selection_range(at as u32, at as u32);
        let _ = el.focus();
        open.set(None);
    };
    let insert_chip = move |key: &str| {
        let Some(el) = area.get() else { return };
        let (text, at) = insert_at(&el.value(), cursor(&el), key);
        form.prompt.set(text.clone());
        el.set_value(&text);
        let _ = el.focus();
        let _ = el.set_selection_range(at as u32, at as u32);
    };
    // Closes after a blur (late, so a click on a suggestion lands first),
    // unless focus came back meanwhile.
    let close_unless_focused = move || {
        let focused = document().active_element().is_some_and(|e| e.id() == "prompt");
        if !focused {
            open.set(None);
        }
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        let list = options();
        if open.get_untracked().is_none() || list.is_empty() {
            return;
        }
        match ev.key().as_str() {
            "ArrowDown" => {
                ev.prevent_default();
                active.update(|i| *i = (*i + 1) % list.len());
            }
            "ArrowUp" => {
                ev.prevent_default();
                active.update(|i| *i = (*i + list.len() - 1) % list.len());
            }
            "Enter" | "Tab" => {
                ev.prevent_default();
                if let Some(p) = list.get(active.get_untracked()) {
                    choose(p.key.clone());
                }
            }
            "Escape" => {
                ev.prevent_default();
                open.set(None);
            }
            _ => {}
        }
    };
    view! {
        <section class="card section" aria-labelledby="then-title">
            <h2 id="then-title">{move || t("automations-then-title")}</h2>
            <p class="help">{move || t("automations-then-description")}</p>
            <div class="field">
                <label for="task-title">{move || t("automations-task-title-label")}</label>
                <input id="task-title" type="text" maxlength="60" autocomplete="off" aria-describedby="task-title-help"
                    placeholder=title_placeholder prop:value=move || form.title.get() on:input=move |ev| form.title.set(event_target_value(&ev))/>
                <p class="help" id="task-title-help">{move || t("automations-task-title-help")}</p>
            </div>
            <div class="field prompt-field">
                <label for="prompt">{move || t("automations-instructions-label")}</label>
                <textarea id="prompt" class="mono prompt" node_ref=area spellcheck="false"
                    role="combobox" aria-autocomplete="list" aria-controls="prompt-completion"
                    aria-expanded=move || (!options().is_empty()).to_string()
                    aria-activedescendant=move || (!options().is_empty()).then(|| format!("completion-{}", active.get()))
                    prop:value=move || form.prompt.get()
                    on:input=move |ev| { form.prompt.set(event_target_value(&ev)); refresh(); }
                    on:click=move |_| refresh()
                    on:keyup=move |ev: leptos::ev::KeyboardEvent| if matches!(ev.key().as_str(), "ArrowLeft" | "ArrowRight" | "Home" | "End") { refresh() }
                    on:keydown=on_keydown
                    on:blur=move |_| set_timeout(close_unless_focused, std::time::Duration::from_millis(150))></textarea>
                <ul class="plain completion" id="prompt-completion" role="listbox" aria-label=move || t("automations-completion-label")
                    hidden=move || options().is_empty()>
                    {move || options().into_iter().enumerate().map(|(i, p)| {
                        let key = p.key.clone();
                        view! {
                            <li role="option" id=format!("completion-{i}") aria-selected=move || (active.get() == i).to_string()
                                class:active=move || active.get() == i
                                on:mousedown=move |ev| { ev.prevent_default(); choose(key.clone()); }>
                                <code>{format!("{{{{{}}}}}", p.key)}</code>
                                <span class="muted">{p.description.clone()}</span>
                                {(!p.example.is_empty()).then(|| view! { <span class="example">{p.example.clone()}</span> })}
                            </li>
                        }
                    }).collect_view()}
                </ul>
                <div class="chips" role="group" aria-labelledby="placeholders-label">
                    <span class="label" id="placeholders-label">{move || t("automations-available-placeholders")}</span>
                    {move || placeholders.get().into_iter().map(|p| {
                        let key = p.key.clone();
                        view! {
                            <button type="button" class="chip" title=p.description.clone()
                                aria-label=ta("automations-insert-placeholder", &[("key", p.key.clone())])
                                on:click=move |_| insert_chip(&key)>{format!("{{{{{}}}}}", p.key)}</button>
                        }
                    }).collect_view()}
                </div>
            </div>
        </section>
    }
}
