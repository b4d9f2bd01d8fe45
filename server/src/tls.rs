//! TLS for outbound HTTPS (GitHub) uses rustls with the `ring` provider,
//! installed once per process before any client is built.

pub fn install_crypto_provider() {
    // Already installed (by us or a host process) is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}
