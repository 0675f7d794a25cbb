//! Names the build: a hash of the sources, the same in the page and in every worker built with
//! it. A worker's greeting carries it, and the page refuses a worker of another build (a new
//! version deployed under an open page serves new workers under the old names).

use std::path::{Path, PathBuf};

fn main() {
    let mut files = vec![PathBuf::from("Cargo.toml"), PathBuf::from("Cargo.lock")];
    sources(Path::new("src"), &mut files);
    files.sort();
    // FNV-1a over each file's path and bytes: the same on every machine and toolchain.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for byte in file.to_string_lossy().bytes().chain(bytes) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=VITLAB_BUILD={hash:016x}");
    for watched in ["src", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={watched}");
    }
}

fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, into);
        } else {
            into.push(path);
        }
    }
}
