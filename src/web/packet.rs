//! How the page and its workers talk: a message as JSON text, with bytes (weights, images,
//! read-back values) travelling beside it as a transferred buffer rather than inside it.
//!
//! Written here rather than taken from `gloo-worker` (0.5), whose bridge encodes every
//! message with bincode into a copied buffer (a run file of megabytes would be copied, not
//! transferred), panics in the receiver on a message it cannot decode (`expect`), and does
//! not hand the page the worker's `error` event, by which the page learns that a worker died
//! with its device and offers to resume on the CPU.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{MessageEvent, Worker};

/// A posted value that is not the message it should be.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PacketError {
    #[error("a message that is not a packet")]
    NotAPacket,
    /// Its JSON is not a message of the expected kind (serde's words for why).
    #[error("an unreadable message: {0}")]
    Unreadable(String),
}

/// A message as it travels: JSON, and the bytes beside it if any.
pub struct Packet {
    pub json: String,
    pub bytes: Option<Vec<u8>>,
}

impl Packet {
    pub fn new(message: &impl serde::Serialize, bytes: Option<Vec<u8>>) -> Self {
        Self {
            json: serde_json::to_string(message).expect("messages serialise"),
            bytes,
        }
    }

    /// The packet an event carries; `None` for anything else.
    pub fn read(event: &MessageEvent) -> Option<Self> {
        let data = event.data();
        if let Some(json) = data.as_string() {
            return Some(Self { json, bytes: None });
        }
        let packet: Array = data.dyn_into().ok()?;
        Some(Self {
            json: packet.get(0).as_string()?,
            bytes: packet
                .get(1)
                .dyn_into::<Uint8Array>()
                .ok()
                .map(|array| array.to_vec()),
        })
    }

    /// The message, parsed.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, PacketError> {
        serde_json::from_str(&self.json).map_err(|e| PacketError::Unreadable(e.to_string()))
    }

    /// The JavaScript value to post and the buffers to transfer with it.
    fn into_js(self) -> (JsValue, Array) {
        let packet = Array::of1(&self.json.into());
        let transfer = Array::new();
        if let Some(bytes) = self.bytes {
            let array = Uint8Array::from(bytes.as_slice());
            transfer.push(&array.buffer());
            packet.push(&array);
        }
        (packet.into(), transfer)
    }

    /// Posts to `worker` (from the page).
    pub fn send_to(self, worker: &Worker) -> Result<(), JsValue> {
        let (packet, transfer) = self.into_js();
        worker.post_message_with_transfer(&packet, &transfer)
    }

    /// Posts to the page (from inside a worker).
    pub fn send_to_page(self) {
        let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let (packet, transfer) = self.into_js();
        let _ = scope.post_message_with_transfer(&packet, &transfer);
    }
}

/// The packets posted to this worker from now on, in the order they came (call it once,
/// inside a worker: it takes the worker's `message` handler for as long as the worker lives).
pub fn packets_to_this_worker() -> futures::channel::mpsc::UnboundedReceiver<Packet> {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let (inbox, packets) = futures::channel::mpsc::unbounded::<Packet>();
    let listener = wasm_bindgen::closure::Closure::<dyn FnMut(MessageEvent)>::new(
        move |event: MessageEvent| {
            if let Some(packet) = Packet::read(&event) {
                let _ = inbox.unbounded_send(packet);
            }
        },
    );
    scope.set_onmessage(Some(listener.as_ref().unchecked_ref()));
    listener.forget();
    packets
}
