//! Pages loaded on demand. Each is split out of the first download by
//! `cargo xtask web` (wasm-split), so the board arrives without the editor,
//! the automation pages and the settings it does not need.

use leptos::prelude::*;
use leptos_router::{LazyRoute, lazy_route};

use crate::pages::automations::{AutomationEditor, AutomationPage, AutomationsList, AutomationsOverview};
use crate::pages::board::TaskDetail;
use crate::pages::{AutomationsHome, Login, Members, Notifications, RunView, Tokens};

/// A route whose page code is its own chunk: `data()` is nothing (pages load
/// their own data), `view()` is the lazily loaded component.
macro_rules! lazy_page {
    ($route:ident, $page:ident) => {
        pub struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_this: Self) -> AnyView {
                view! { <$page/> }.into_any()
            }
        }
    };
}

lazy_page!(LoginRoute, Login);
lazy_page!(TaskDetailRoute, TaskDetail);
lazy_page!(RunViewRoute, RunView);
lazy_page!(TokensRoute, Tokens);
lazy_page!(MembersRoute, Members);
lazy_page!(NotificationsRoute, Notifications);
lazy_page!(AutomationsHomeRoute, AutomationsHome);
lazy_page!(AutomationsOverviewRoute, AutomationsOverview);
lazy_page!(AutomationPageRoute, AutomationPage);
lazy_page!(AutomationsListRoute, AutomationsList);
lazy_page!(AutomationEditorRoute, AutomationEditor);
