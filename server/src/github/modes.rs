//! The modes of a commit's files, read directory by directory over GraphQL
//! (`object(expression: "sha:dir")` lists a directory's entries with their
//! modes); compare, which lists a diff, has none.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::client::{GithubClient, GithubError, GithubResult};

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

/// Every entry's mode (octal, as git writes it: `100644`) by path, from
/// the listings answered for `chunk` (`d{i}` for `chunk[i]`). A directory
/// without a listing holds a file compare listed at that commit, so the
/// answer is incomplete, not the directory gone.
fn modes_of(
    chunk: &[String],
    mut answered: HashMap<String, Option<Listing>>,
) -> Result<BTreeMap<String, String>, String> {
    let mut modes = BTreeMap::new();
    for (i, dir) in chunk.iter().enumerate() {
        let Some(Some(listing)) = answered.remove(&format!("d{i}")) else {
            return Err(format!("no listing of the directory '{dir}'"));
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
    Ok(modes)
}

impl GithubClient {
    /// The modes of every entry of the directories `dirs` (`""`: the top
    /// level) of commit `sha`, by path. GitHub's GraphQL fails a query it
    /// could not finish in time with an `errors` answer: that, like a
    /// missing listing, is [`GithubError::Incomplete`] and passes.
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
            let data: Data = match self.graphql(&query(chunk.len()), Value::Object(vars), true).await {
                Ok(data) => data,
                Err(GithubError::Graphql(m)) => return Err(GithubError::Incomplete(m)),
                Err(e) => return Err(e),
            };
            let answered = data.repository.ok_or(GithubError::NotFound)?;
            modes.extend(modes_of(chunk, answered).map_err(GithubError::Incomplete)?);
        }
        Ok(modes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(entries: &[(&str, u32)]) -> Option<Listing> {
        let entries = entries
            .iter()
            .map(|(name, mode)| Entry {
                name: name.to_string(),
                mode: *mode,
            })
            .collect();
        Some(Listing { entries })
    }

    #[test]
    fn listings_give_each_path_its_octal_mode_and_a_missing_one_is_incomplete() {
        let chunk = vec![String::new(), "src".to_string()];
        let answered = HashMap::from([
            ("d0".to_string(), listing(&[("run.sh", 33261), ("src", 16384)])),
            ("d1".to_string(), listing(&[("lib.rs", 33188)])),
        ]);
        let modes = modes_of(&chunk, answered).expect("complete");
        assert_eq!(modes["run.sh"], "100755");
        assert_eq!(modes["src/lib.rs"], "100644");
        assert_eq!(modes["src"], "40000");
        let short = HashMap::from([("d0".to_string(), listing(&[])), ("d1".to_string(), None)]);
        assert_eq!(
            modes_of(&chunk, short),
            Err("no listing of the directory 'src'".to_string())
        );
    }

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
