//! Keeps notifications on the public internet (`kandev_core::notify::public_address`)
//! unless the operator allows private addresses. Names are checked where
//! they are resolved, on every connection, so a name that later resolves
//! inward (DNS rebinding) is refused too; literal addresses never reach a
//! resolver and are checked before sending.

use std::net::{IpAddr, SocketAddr};

use kandev_core::notify::public_address;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why a target's address was refused, as the delivery log shows it.
pub fn refusal(host: &str) -> String {
    format!(
        "refused: {host} is a loopback, private or link-local address; notifications go to public addresses only (see KANDEV_NOTIFY_PRIVATE_ADDRESSES)"
    )
}

/// The internal address a URL names literally, if it does. Read by the URL
/// parser the client itself uses, so `http://2130706433/`, `http://127.1/`
/// and `http://0x7f.0.0.1/` are the loopback address they will connect to.
pub fn internal_literal(url: &str) -> Option<IpAddr> {
    let parsed = reqwest::Url::parse(url).ok()?;
    // The parser serialises an address host in its canonical form.
    let host = parsed.host_str()?;
    let ip: IpAddr = host.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
    (!public_address(ip)).then_some(ip)
}

/// A resolver that answers only with public addresses.
pub struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| public_address(a.ip())).collect();
            if public.is_empty() {
                return Err(refusal(&host).into());
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}
