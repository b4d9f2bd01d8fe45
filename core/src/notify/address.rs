//! Which network addresses a notification may be sent to. Targets are set by
//! workspace owners, not by whoever runs the server: a target must not reach
//! the server's own host, its private network or the cloud metadata service.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is on the public internet: not loopback, private, shared
/// (carrier-grade NAT), link-local, unspecified, broadcast, multicast,
/// documentation, benchmarking or reserved, in IPv4 or IPv6, including IPv4
/// addresses carried inside IPv6 (`::ffff:10.0.0.1`, NAT64, 6to4).
pub fn public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0                                    // "this network"
        || a == 10                              // private
        || a == 127                             // loopback
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254)               // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))  // private
        || (a == 192 && b == 0 && c == 0)       // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)       // documentation
        || (a == 192 && b == 88 && c == 99)     // 6to4 relay anycast
        || (a == 192 && b == 168)               // private
        || (a == 198 && (18..20).contains(&b))  // benchmarking
        || (a == 198 && b == 51 && c == 100)    // documentation
        || (a == 203 && b == 0 && c == 113)     // documentation
        || a >= 224) // multicast, reserved, broadcast
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let embedded_v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(v4) = ip.to_ipv4_mapped() {
        return public_v4(v4);
    }
    match s {
        // IPv4-compatible (deprecated) and the unspecified/loopback addresses.
        [0, 0, 0, 0, 0, 0, hi, lo] => hi != 0 && public_v4(embedded_v4(hi, lo)),
        // NAT64 well-known prefix: the IPv4 address it translates to.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => public_v4(embedded_v4(hi, lo)),
        // 6to4: the IPv4 address of the tunnel's end.
        [0x2002, hi, lo, ..] => public_v4(embedded_v4(hi, lo)),
        // Discard-only, documentation, unique local, link-local, site-local, multicast.
        [0x100, 0, 0, 0, ..] => false,
        [0x2001, 0xdb8, ..] => false,
        [first, ..] if first & 0xfe00 == 0xfc00 => false,
        [first, ..] if first & 0xffc0 == 0xfe80 => false,
        [first, ..] if first & 0xffc0 == 0xfec0 => false,
        [first, ..] if first & 0xff00 == 0xff00 => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for s in [
            "127.0.0.1",
            "127.8.9.1",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::127.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:c0a8:0101::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "100::1",
        ] {
            assert!(!public_address(ip(s)), "{s} passed as public");
        }
    }

    #[test]
    fn internet_addresses_are_public() {
        for s in [
            "1.1.1.1",
            "8.8.8.8",
            "140.82.112.3",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.1.1",
            "192.169.0.1",
            "223.255.255.254",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80e::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:0808:0808::1",
        ] {
            assert!(public_address(ip(s)), "{s} refused as internal");
        }
    }
}
