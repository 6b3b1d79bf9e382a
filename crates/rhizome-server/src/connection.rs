//! One Bolt connection on tokio: handshake, then a reader task that frames
//! messages (and spots RESET the moment it arrives) feeding the session.

use crate::framing::ChunkDecoder;
use crate::handshake::{self, Opening, HANDSHAKE_LEN};
use crate::log::log;
use crate::message;
use crate::session::{Flow, Interrupt, Session};
use crate::status::codes;
use crate::ServerShared;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// What the reader hands the session.
enum Incoming {
    /// A whole message.
    Message(Vec<u8>),
    /// A message over the size limit: the connection ends.
    TooLarge(String),
}

/// The bytes of a RESET message (a structure of no fields, tag 0x0F).
const RESET: [u8; 2] = [0xB0, 0x0F];

/// Serves one accepted connection (plain TCP or TLS) to its end.
/// `admitted` is false when the server is at its connection limit: the
/// client then gets a clear FAILURE.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    mut stream: S,
    peer: SocketAddr,
    shared: Arc<ServerShared>,
    admitted: bool,
) {
    let id = shared.next_connection_id();
    let mut opening = [0u8; HANDSHAKE_LEN];
    let read = timeout(
        shared.handshake_timeout,
        read_opening(&mut stream, &mut opening),
    )
    .await;
    let version = match read {
        Err(_) => {
            log(format_args!(
                "bolt-{id} {peer}: no handshake within {:?}, closed",
                shared.handshake_timeout
            ));
            return;
        }
        Ok(Err(_)) if !handshake::looks_like_http(&opening) => {
            log(format_args!(
                "bolt-{id} {peer}: closed during the handshake"
            ));
            return;
        }
        Ok(_) => match handshake::parse(&opening) {
            Opening::Bolt(Some(version)) => version,
            Opening::Bolt(None) => {
                log(format_args!(
                    "bolt-{id} {peer}: no supported Bolt version proposed, closed"
                ));
                let _ = stream.write_all(&[0, 0, 0, 0]).await;
                return;
            }
            Opening::Http => {
                log(format_args!(
                    "bolt-{id} {peer}: HTTP request on the Bolt port, answered 400"
                ));
                let _ = stream.write_all(&handshake::http_refusal()).await;
                let _ = stream.shutdown().await;
                return;
            }
            Opening::Garbage => {
                log(format_args!(
                    "bolt-{id} {peer}: not a Bolt handshake, closed"
                ));
                return;
            }
        },
    };
    if stream.write_all(&version.to_bytes()).await.is_err() {
        return;
    }
    if !admitted {
        refuse(stream, id, peer, &shared).await;
        return;
    }
    log(format_args!("bolt-{id} {peer}: connected (Bolt {version})"));
    let (mut reader, mut writer) = tokio::io::split(stream);
    let interrupt = Arc::new(Interrupt::default());
    let (sender, mut receiver) = mpsc::channel(32);
    let limit = shared.max_message_size;
    let reader_interrupt = interrupt.clone();
    let reader_task = tokio::spawn(async move {
        let mut decoder = ChunkDecoder::new(limit);
        let mut buffer = Vec::with_capacity(8192);
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            let n = match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            buffer.extend_from_slice(&chunk[..n]);
            loop {
                match decoder.decode(&buffer) {
                    Ok((used, message)) => {
                        buffer.drain(..used);
                        let Some(message) = message else { break };
                        if message == RESET {
                            reader_interrupt.reset_arrived();
                        }
                        if sender.send(Incoming::Message(message)).await.is_err() {
                            return;
                        }
                    }
                    Err(too_large) => {
                        let _ = sender.send(Incoming::TooLarge(too_large.to_string())).await;
                        reader_interrupt.stop_all();
                        return;
                    }
                }
            }
        }
        // The client went away: stop its query at once.
        reader_interrupt.stop_all();
    });
    let mut session = Session::new(
        version,
        shared.registry.clone(),
        shared.session.clone(),
        interrupt.clone(),
        format!("bolt-{id}"),
    )
    .with_users(shared.users.clone());
    let mut shutdown = shared.shutdown.clone();
    let reason = loop {
        let incoming = tokio::select! {
            incoming = timeout(shared.idle_timeout, receiver.recv()) => incoming,
            _ = shutdown.changed() => break "server shutting down",
        };
        let bytes = match incoming {
            Err(_) => break "idle timeout",
            Ok(None) => break "client disconnected",
            Ok(Some(Incoming::TooLarge(why))) => {
                let mut out = Vec::new();
                message::failure(&mut out, codes::REQUEST_INVALID, &why);
                let _ = writer.write_all(&out).await;
                break "message too large";
            }
            Ok(Some(Incoming::Message(bytes))) => bytes,
        };
        let handled = tokio::select! {
            handled = session.handle(&bytes, &mut writer) => handled,
            _ = shutdown.changed() => break "server shutting down",
        };
        match handled {
            Ok(Flow::Continue) => {}
            Ok(Flow::Close) => break "closed by the client (GOODBYE) or a protocol error",
            Err(_) => break "write failed (client gone)",
        }
    };
    interrupt.stop_all();
    reader_task.abort();
    let user = session.user().to_string();
    drop(session); // rolls back an open transaction
    log(format_args!(
        "bolt-{id} {peer}: disconnected ({reason}){}",
        if user.is_empty() {
            String::new()
        } else {
            format!(", user {user}")
        }
    ));
}

/// Reads the opening bytes; an HTTP request may be shorter than a handshake.
async fn read_opening<S: AsyncRead + Unpin>(
    stream: &mut S,
    opening: &mut [u8; HANDSHAKE_LEN],
) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < HANDSHAKE_LEN {
        let n = stream.read(&mut opening[filled..]).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
        if filled >= 4 && handshake::looks_like_http(&opening[..filled]) {
            return Ok(());
        }
    }
    Ok(())
}

/// Answers the first message of a connection over the limit with a
/// FAILURE that says so, then closes.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    id: u64,
    peer: SocketAddr,
    shared: &ServerShared,
) {
    log(format_args!(
        "bolt-{id} {peer}: refused, the server is at its limit of {} connections",
        shared.max_connections
    ));
    let mut decoder = ChunkDecoder::new(shared.max_message_size);
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let first = timeout(shared.handshake_timeout, async {
        loop {
            let n = stream.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
            buffer.extend_from_slice(&chunk[..n]);
            if let Ok((_, Some(_))) = decoder.decode(&buffer) {
                return Some(());
            }
        }
    })
    .await;
    if let Ok(Some(())) = first {
        let mut out = Vec::new();
        message::failure(
            &mut out,
            codes::UNAVAILABLE,
            &format!(
                "the server is at its limit of {} connections (max_connections); try again later",
                shared.max_connections
            ),
        );
        let _ = stream.write_all(&out).await;
    }
}
