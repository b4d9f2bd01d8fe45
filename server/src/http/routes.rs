//! A router that remembers its routes: every `(method, template)` it serves is
//! listed, so the access guard's table and the access tests are checked
//! against what the server really routes, not against a hand-kept list.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodRouter, delete, get, patch, post, put};

use super::AppState;

#[derive(Default)]
pub struct ApiRoutes {
    router: Router<AppState>,
    table: Vec<(&'static str, &'static str)>,
}

macro_rules! method {
    ($name:ident, $route:ident, $verb:literal) => {
        pub fn $name<H, T>(self, path: &'static str, handler: H) -> Self
        where
            H: Handler<T, AppState>,
            T: 'static,
        {
            self.with(path, &[$verb], $route(handler))
        }
    };
}

impl ApiRoutes {
    pub fn new() -> Self {
        Self::default()
    }

    method!(get, get, "GET");
    method!(post, post, "POST");
    method!(put, put, "PUT");
    method!(patch, patch, "PATCH");
    method!(delete, delete, "DELETE");

    /// A method router built by hand (extra layers, `any`), with the methods it
    /// serves (`*` for any).
    pub fn with(mut self, path: &'static str, methods: &[&'static str], route: MethodRouter<AppState>) -> Self {
        self.table.extend(methods.iter().map(|m| (*m, path)));
        self.router = self.router.route(path, route);
        self
    }

    pub fn merge(mut self, other: ApiRoutes) -> Self {
        self.table.extend(other.table);
        self.router = self.router.merge(other.router);
        self
    }

    pub fn table(&self) -> &[(&'static str, &'static str)] {
        &self.table
    }

    pub fn into_router(self) -> Router<AppState> {
        self.router
    }
}
