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

/// An optional whole number that JSON may spell `229` or `229.0` (JSON
/// Schema's `integer` admits both); a fraction or a value past `i64` is an
/// error, `null` or absence is `None`.
pub(crate) fn opt_whole<'de, D>(d: D) -> Result<Option<i64>, D::Error>
where
    D: Deserializer<'de>,
{
    match Option::<serde_json::Number>::deserialize(d)? {
        None => Ok(None),
        Some(n) => whole(&n)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("{n} is not a whole number"))),
    }
}

/// [`opt_whole`] for a PATCH field: absent leaves it, `null` clears it.
pub(crate) fn patch_whole<'de, D>(d: D) -> Result<Option<Option<i64>>, D::Error>
where
    D: Deserializer<'de>,
{
    opt_whole(d).map(Some)
}

fn whole(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        let f = n.as_f64()?;
        // i64::MAX as f64 rounds up to 2^63, which is out of range.
        (f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64).then_some(f as i64)
    })
}
