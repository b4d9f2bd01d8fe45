//! Lenient decoding helpers: `null` reads as the zero value, as Go's JSON does.

use serde::{Deserialize, Deserializer};

pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}
