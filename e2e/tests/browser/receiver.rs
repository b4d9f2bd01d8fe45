//! A notification receiver for the scenarios: a loopback HTTP endpoint that
//! answers 200 to every request and keeps the request heads it saw.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

pub struct Receiver {
    pub url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    pub async fn start() -> anyhow::Result<Receiver> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/hook", listener.local_addr()?);
        let seen = Arc::new(Mutex::new(vec![]));
        let keep = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let keep = keep.clone();
                tokio::spawn(async move {
                    // Read until the head is complete; the body is not needed.
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 64 * 1024 {
                        match conn.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&buf).to_string();
                    keep.lock().unwrap_or_else(|p| p.into_inner()).push(head);
                    let _ = conn
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                });
            }
        });
        Ok(Receiver { url, seen })
    }

    /// The `X-Kandev-Event` of every request so far.
    pub fn events(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(|h| {
                h.lines().find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("x-kandev-event:")
                        .map(|v| v.trim().to_string())
                })
            })
            .collect()
    }
}
