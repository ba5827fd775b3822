//! stdin/stdout as the SDK's transport, one JSON-RPC message per line, answering what the SDK
//! would drop: a line that is not JSON gets a parse error (-32700), and JSON that is not a
//! request, notification or response gets an invalid-request error (-32600) with its id.
//! The SDK's replies and these go through one writer, a whole line at a time.

use std::io;
use std::pin::Pin;
use std::sync::Arc;

use futures::{Sink, Stream};
use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcError, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Stdin, Stdout};
use tokio::sync::Mutex;

type Out = Arc<Mutex<Stdout>>;

async fn write_line(out: &Out, msg: &ServerJsonRpcMessage) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(msg).map_err(io::Error::other)?;
    bytes.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&bytes).await?;
    out.flush().await
}

/// The error a line that is no client message gets.
fn malformed(line: &str, why: &serde_json::Error) -> ServerJsonRpcMessage {
    let error = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(value) => {
            let id = value.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            return JsonRpcMessage::Error(JsonRpcError::new(
                id,
                ErrorData::invalid_request(format!("not a JSON-RPC request: {why}"), None),
            ));
        }
        Err(e) => ErrorData::parse_error(format!("not JSON: {e}"), None),
    };
    JsonRpcMessage::Error(JsonRpcError::new(None, error))
}

/// The client's messages, each malformed line answered on the way.
fn messages(stdin: Stdin, out: Out) -> impl Stream<Item = ClientJsonRpcMessage> + Send {
    futures::stream::unfold((BufReader::new(stdin), out), |(mut reader, out)| async move {
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line).await {
                Ok(0) | Err(_) => return None,
                Ok(_) if line.trim().is_empty() => continue,
                Ok(_) => {}
            }
            match serde_json::from_str::<ClientJsonRpcMessage>(&line) {
                Ok(msg) => return Some((msg, (reader, out))),
                Err(why) => write_line(&out, &malformed(&line, &why)).await.ok()?,
            }
        }
    })
}

type BoxSink = Pin<Box<dyn Sink<ServerJsonRpcMessage, Error = io::Error> + Send>>;
type BoxStream = Pin<Box<dyn Stream<Item = ClientJsonRpcMessage> + Send>>;

/// The (sink, stream) pair the SDK serves on.
pub fn stdio() -> (BoxSink, BoxStream) {
    let out: Out = Arc::new(Mutex::new(tokio::io::stdout()));
    let sink = futures::sink::unfold(out.clone(), |out, msg: ServerJsonRpcMessage| async move {
        write_line(&out, &msg).await?;
        Ok::<_, io::Error>(out)
    });
    (Box::pin(sink), Box::pin(messages(tokio::io::stdin(), out)))
}
