//! The models shipped in `pretrained/` (see its model card), as the page offers them. Only
//! these have an address a link to an experiment can name. The site serves each as
//! `.safetensors.gz` (`scripts/stamp.sh` compresses them; `web::fetch_weights` inflates them),
//! since static hosts send a `.safetensors` file uncompressed; the plain files are there too.

/// The weights the page opens with, relative to the page; `?weights=URL` overrides.
pub const DEFAULT_WEIGHTS: &str = "pretrained/vit-lab.safetensors.gz";

/// The shipped CNN: the ViT is compared with it (data scaling, patch occlusion).
pub const SHIPPED_CNN: &str = "pretrained/cnn-teacher.safetensors.gz";

/// Each shipped model's address and the name the page gives it.
pub const SHIPPED_MODELS: [(&str, &str); 3] = [
    (DEFAULT_WEIGHTS, "lab: patch 4, a 7×7 grid"),
    (
        "pretrained/vit-seed.safetensors.gz",
        "seed recipe: patch 7, a 4×4 grid",
    ),
    (SHIPPED_CNN, "CNN: the lab model's teacher, no attention"),
];

/// Whether `source` (an address, or a name such as "upload x.safetensors") is a shipped model.
pub fn is_shipped(source: &str) -> bool {
    SHIPPED_MODELS.iter().any(|(url, _)| *url == source)
}
