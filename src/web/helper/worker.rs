//! A helper worker: builds the run's model once, then computes a job's shards of a step with
//! the parameters that come with it, in the order the jobs came.

use std::cell::RefCell;

use burn::module::Module;
use burn::tensor::Device;
use futures::StreamExt;
use wasm_bindgen_futures::spawn_local;

use crate::model::{Budget, Classifier, CostError, ModelConfig};
use crate::protocol::{FromHelper, PartsError, ToHelper};
use crate::train::{ShardJob, ShardJobError};
use crate::web::packet::{Packet, PacketError, packets_to_this_worker};

/// Why the setup or a job could not be done (the helper then takes no more).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum HelperFailure {
    #[error(transparent)]
    Packet(#[from] PacketError),
    #[error(transparent)]
    Budget(#[from] CostError),
    #[error("a job came before the model was set up")]
    NoModel,
    #[error(transparent)]
    Parts(#[from] PartsError),
    #[error(transparent)]
    Shard(#[from] ShardJobError),
}

/// The run's model, built at setup.
struct Model {
    config: ModelConfig,
    model: Classifier,
    device: Device,
}

/// The worker's entry point.
pub fn run_helper_worker() {
    let mut requests = packets_to_this_worker();
    spawn_local(async move {
        let model = RefCell::new(None::<Model>);
        while let Some(packet) = requests.next().await {
            let answer = match packet.parse::<ToHelper>() {
                Ok(request) => handle(request, packet.bytes.unwrap_or_default(), &model),
                Err(error) => Err(error.into()),
            };
            let (answer, bytes) = answer.unwrap_or_else(|error| {
                // Whatever went wrong, the training worker computes the shards itself.
                *model.borrow_mut() = None;
                let message = error.to_string();
                (FromHelper::Failed { message }, None)
            });
            Packet::new(&answer, bytes).send_to_page();
        }
    });
    let greeting = FromHelper::Listening {
        build: crate::protocol::BUILD.to_string(),
    };
    Packet::new(&greeting, None).send_to_page();
}

fn handle(
    request: ToHelper,
    bytes: Vec<u8>,
    slot: &RefCell<Option<Model>>,
) -> Result<(FromHelper, Option<Vec<u8>>), HelperFailure> {
    match request {
        ToHelper::Setup { config } => {
            config.check_budget(&Budget::PAGE, None)?;
            // As the trainer builds its own: on the CPU, then in training mode (autodiff on).
            let model = config.init(&Device::flex()).train();
            let device = Device::flex().autodiff();
            *slot.borrow_mut() = Some(Model {
                config,
                model,
                device,
            });
            Ok((FromHelper::Built, None))
        }
        ToHelper::Job(header) => {
            let slot = slot.borrow();
            let Some(built) = slot.as_ref() else {
                return Err(HelperFailure::NoModel);
            };
            let job = ShardJob::from_parts(header, &bytes)?;
            let done = job.run(built.model.clone(), &built.config, &built.device)?;
            let (header, bytes) = done.into_parts();
            Ok((FromHelper::Done(header), Some(bytes)))
        }
    }
}
