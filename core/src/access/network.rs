//! DNS-rebinding and cross-site request rules: which `Host` a request may
//! name, and which `Origin` may send a cookie-authenticated change.

/// The server's public origin (`KANDEV_PUBLIC_URL`), parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicOrigin {
    /// `http` or `https`.
    pub scheme: String,
    /// Lowercase host, without port.
    pub host: String,
    /// The port when it is not the scheme's default.
    pub port: Option<u16>,
}

impl PublicOrigin {
    /// Parses `scheme://host[:port][/…]`; anything else is refused with a reason.
    pub fn parse(url: &str) -> Result<PublicOrigin, String> {
        let url = url.trim();
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("KANDEV_PUBLIC_URL {url:?} must start with http:// or https://"))?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Err(format!("KANDEV_PUBLIC_URL {url:?} must use http or https"));
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("KANDEV_PUBLIC_URL {url:?} needs a plain host"));
        }
        let (host, port) = split_host_port(authority);
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .map_err(|_| format!("KANDEV_PUBLIC_URL {url:?} has a bad port"))?,
            ),
        };
        let default = if scheme == "https" { 443 } else { 80 };
        Ok(PublicOrigin {
            scheme,
            host: host.to_ascii_lowercase(),
            port: port.filter(|p| *p != default),
        })
    }

    pub fn is_https(&self) -> bool {
        self.scheme == "https"
    }

    /// `scheme://host[:port]`, as browsers send it in `Origin`.
    pub fn origin(&self) -> String {
        match self.port {
            Some(p) => format!("{}://{}:{p}", self.scheme, self.host),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }
}

/// `host[:port]` → (host, port); IPv6 literals keep their brackets.
fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => {
                let port = authority[end + 1..].strip_prefix(':');
                (&authority[..=end], port)
            }
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    }
}

/// `localhost`, `*.localhost`, `127.0.0.0/8` and `[::1]`: names no outside
/// DNS can point a browser at this machine with.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") || host == "[::1]" || host == "::1" {
        return true;
    }
    let octets: Vec<&str> = host.split('.').collect();
    octets.len() == 4
        && octets[0] == "127"
        && octets
            .iter()
            .all(|o| !o.is_empty() && o.len() <= 3 && o.bytes().all(|b| b.is_ascii_digit()) && o.parse::<u8>().is_ok())
}

/// Whether a request naming `host_header` (`host[:port]`) may be served: a
/// loopback name, or the public origin's host.
pub fn host_allowed(host_header: &str, public: Option<&PublicOrigin>) -> bool {
    let (host, _) = split_host_port(host_header.trim());
    if host.is_empty() {
        return false;
    }
    is_loopback_host(host) || public.is_some_and(|p| p.host.eq_ignore_ascii_case(host.trim_end_matches('.')))
}

/// Whether a cookie-authenticated change carrying `origin` comes from this
/// server's own pages: the public origin, or the loopback origin the request
/// was addressed to.
pub fn origin_allowed(origin: &str, host_header: &str, public: Option<&PublicOrigin>) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    if public.is_some_and(|p| p.origin() == origin) {
        return true;
    }
    let host_header = host_header.trim().to_ascii_lowercase();
    let (host, _) = split_host_port(&host_header);
    is_loopback_host(host) && (origin == format!("http://{host_header}") || origin == format!("https://{host_header}"))
}
