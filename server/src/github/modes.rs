//! The modes of a commit's files, read directory by directory over GraphQL
//! (`object(expression: "sha:dir")` lists a directory's entries with their
//! modes); compare, which lists a diff, has none.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::client::{GithubClient, GithubResult};

/// Directories per query: few enough to keep one answer small.
const DIRS_PER_QUERY: usize = 100;

#[derive(Deserialize)]
struct Data {
    repository: Option<HashMap<String, Option<Listing>>>,
}

/// A directory as `... on Tree` answers it (a path that is no directory
/// answers without entries).
#[derive(Deserialize)]
struct Listing {
    #[serde(default)]
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    name: String,
    /// The mode as a number (`33261` for `100755`).
    mode: u32,
}

/// The query for `count` directories, each named by a variable: a path is
/// never written into the query text.
fn query(count: usize) -> String {
    let params: String = (0..count).map(|i| format!(", $e{i}: String!")).collect();
    let fields: String = (0..count)
        .map(|i| format!(" d{i}: object(expression: $e{i}) {{ ... on Tree {{ entries {{ name mode }} }} }}"))
        .collect();
    format!(
        "query FileModes($owner: String!, $name: String!{params}) {{ repository(owner: $owner, name: $name) {{{fields} }} }}"
    )
}

impl GithubClient {
    /// Every entry's mode (octal, as git writes it: `100644`) by path, in
    /// the directories `dirs` (`""`: the top level) of commit `sha`. A
    /// directory GitHub does not find adds nothing.
    pub async fn modes(
        &self,
        owner: &str,
        repo: &str,
        sha: &str,
        dirs: &[String],
    ) -> GithubResult<BTreeMap<String, String>> {
        let mut modes = BTreeMap::new();
        for chunk in dirs.chunks(DIRS_PER_QUERY) {
            let mut vars = Map::new();
            vars.insert("owner".into(), json!(owner));
            vars.insert("name".into(), json!(repo));
            for (i, dir) in chunk.iter().enumerate() {
                vars.insert(format!("e{i}"), json!(format!("{sha}:{dir}")));
            }
            let data: Data = self.graphql(&query(chunk.len()), Value::Object(vars), true).await?;
            let mut answered = data.repository.unwrap_or_default();
            for (i, dir) in chunk.iter().enumerate() {
                let Some(Some(listing)) = answered.remove(&format!("d{i}")) else {
                    continue;
                };
                for e in listing.entries {
                    let path = if dir.is_empty() {
                        e.name
                    } else {
                        format!("{dir}/{}", e.name)
                    };
                    modes.insert(path, format!("{:o}", e.mode));
                }
            }
        }
        Ok(modes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_each_directory_by_a_variable() {
        assert_eq!(
            query(2),
            "query FileModes($owner: String!, $name: String!, $e0: String!, $e1: String!) { repository(owner: $owner, name: $name) { \
             d0: object(expression: $e0) { ... on Tree { entries { name mode } } } \
             d1: object(expression: $e1) { ... on Tree { entries { name mode } } } } }"
        );
    }
}
