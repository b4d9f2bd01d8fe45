//! Lenient decoding helpers: `null` reads as the zero value, as Go's JSON does.

use serde::{Deserialize, Deserializer};

pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A list of structs that must each be a JSON object: serde would also read
/// a struct from an array, which no request of the API allows.
pub(crate) fn objects<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let maps = Vec::<serde_json::Map<String, serde_json::Value>>::deserialize(d)?;
    maps.into_iter()
        .map(|m| serde_json::from_value(serde_json::Value::Object(m)).map_err(serde::de::Error::custom))
        .collect()
}

/// [`objects`], absent or `null` allowed.
pub(crate) fn opt_objects<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let maps = Option::<Vec<serde_json::Map<String, serde_json::Value>>>::deserialize(d)?;
    maps.map(|maps| {
        maps.into_iter()
            .map(|m| serde_json::from_value(serde_json::Value::Object(m)).map_err(serde::de::Error::custom))
            .collect()
    })
    .transpose()
}

/// A field of a PATCH: absent (`None`, via `#[serde(default)]`) leaves the
/// value alone, `null` (`Some(None)`) clears it.
pub(crate) fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
