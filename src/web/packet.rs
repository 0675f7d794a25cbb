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

/// A message as it travels: JSON, the id of the request it is or answers (a drawing or
/// explaining worker's: the envelope carries it, not the message), and the bytes beside it if
/// any.
pub struct Packet {
    pub json: String,
    pub id: Option<u32>,
    pub bytes: Option<Vec<u8>>,
}

impl Packet {
    pub fn new(message: &impl serde::Serialize, bytes: Option<Vec<u8>>) -> Self {
        Self {
            json: serde_json::to_string(message).expect("messages serialise"),
            id: None,
            bytes,
        }
    }

    /// The packet as request `id`, or as the answer to it.
    pub fn with_id(mut self, id: Option<u32>) -> Self {
        self.id = id;
        self
    }

    /// The packet an event carries; `None` for anything else.
    pub fn read(event: &MessageEvent) -> Option<Self> {
        let data = event.data();
        if let Some(json) = data.as_string() {
            return Some(Self {
                json,
                id: None,
                bytes: None,
            });
        }
        let packet: Array = data.dyn_into().ok()?;
        // An id is a whole number a `u32` holds; anything else is none.
        let id = packet
            .get(1)
            .as_f64()
            .filter(|id| id.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(id))
            .map(|id| id as u32);
        Some(Self {
            json: packet.get(0).as_string()?,
            id,
            bytes: packet
                .get(2)
                .dyn_into::<Uint8Array>()
                .ok()
                .map(|array| array.to_vec()),
        })
    }

    /// The message, parsed.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, PacketError> {
        serde_json::from_str(&self.json).map_err(|e| PacketError::Unreadable(e.to_string()))
    }

    /// The JavaScript value to post (`[json, id or null, bytes?]`) and the buffers to transfer
    /// with it.
    fn into_js(self) -> (JsValue, Array) {
        let id = self.id.map_or(JsValue::NULL, JsValue::from);
        let packet = Array::of2(&self.json.into(), &id);
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
