//! The browser suite: every Editor scenario of the merged-trigger spec, the
//! merged loop, the merger loop, languages and accessibility — each on a
//! desktop and on a phone, against the real server.

mod access;
mod accessibility;
mod automations;
mod automations_home;
mod board_live;
mod board_moves;
mod code_split;
mod editor;
mod first_reads;
mod languages;
mod merged_loop;
mod merger_loop;
mod page_policy;
mod preview;
mod receiver;
mod repository_picker;
mod save_failure;
mod schedule;
mod support;
mod task_page;
mod transfer;
