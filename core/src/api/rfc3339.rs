//! How API bodies' times are read: RFC 3339, which is what chrono writes.
//! chrono's own `Deserialize` goes through its general parser, the largest
//! piece of chrono in the browser's first page; its RFC 3339 parser reads
//! every time the server writes, and GitHub's, with far less code.

use chrono::{DateTime, Utc};
use serde::de::Error;
use serde::{Deserialize, Deserializer};

pub fn parse(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|d| d.to_utc())
}

fn read<E: Error>(s: &str) -> Result<DateTime<Utc>, E> {
    parse(s).ok_or_else(|| E::custom("expected an RFC 3339 time"))
}

pub fn de<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
    read(&String::deserialize(d)?)
}

pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    Option::<String>::deserialize(d)?.map(|s| read(&s)).transpose()
}

pub fn de_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<DateTime<Utc>>, D::Error> {
    Vec::<String>::deserialize(d)?.iter().map(|s| read(s)).collect()
}

#[cfg(test)]
mod tests {
    use chrono::{SecondsFormat, TimeZone};
    use serde::Serialize;

    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Times {
        #[serde(deserialize_with = "de")]
        at: DateTime<Utc>,
        #[serde(deserialize_with = "de_opt")]
        maybe: Option<DateTime<Utc>>,
        #[serde(deserialize_with = "de_vec")]
        runs: Vec<DateTime<Utc>>,
    }

    #[test]
    fn times_read_back_exactly_as_chrono_writes_them_at_every_precision() {
        let base = Utc.with_ymd_and_hms(2026, 12, 2, 21, 16, 26).unwrap();
        for nanos in [0, 123_000_000, 123_456_000, 123_456_789, 1] {
            let at = base + chrono::Duration::nanoseconds(nanos);
            let times = Times {
                at,
                maybe: Some(at),
                runs: vec![at, base],
            };
            let json = serde_json::to_string(&times).unwrap();
            assert_eq!(serde_json::from_str::<Times>(&json).unwrap(), times, "{json}");
            for format in [SecondsFormat::Secs, SecondsFormat::Millis, SecondsFormat::AutoSi] {
                let written = at.to_rfc3339_opts(format, true);
                let read = parse(&written).unwrap();
                assert_eq!(read.to_rfc3339_opts(format, true), written);
            }
        }
    }

    #[test]
    fn offsets_are_read_as_the_same_instant_and_null_as_none() {
        let times: Times = serde_json::from_str(
            r#"{"at": "2026-03-08T14:00:00.5+02:00", "maybe": null, "runs": ["2026-03-08T12:00:00z"]}"#,
        )
        .unwrap();
        assert_eq!(times.at.to_rfc3339(), "2026-03-08T12:00:00.500+00:00");
        assert_eq!(times.maybe, None);
        assert_eq!(times.runs[0].to_rfc3339(), "2026-03-08T12:00:00+00:00");
    }

    #[test]
    fn what_is_not_an_rfc_3339_time_is_refused() {
        for bad in [
            "",
            "yesterday",
            "2026-03-08",
            "2026-03-08T12:00:00",
            "2026-13-08T12:00:00Z",
            "1741435200",
        ] {
            let json = format!(r#"{{"at": "{bad}", "maybe": null, "runs": []}}"#);
            assert!(serde_json::from_str::<Times>(&json).is_err(), "{bad:?} was read");
        }
        assert!(serde_json::from_str::<Times>(r#"{"at": 5, "maybe": null, "runs": []}"#).is_err());
    }
}
