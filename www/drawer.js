// The page's drawing worker: the page's own wasm, started as a module worker, holds the model
// on the CPU (src/main.rs runs the drawing worker where there is no window). The build stamps
// the page's content-named script below (scripts/stamp.sh); the wasm beside it is the one the
// page loaded, so a visit downloads it once.
import init from "./vitlab.js";

init({ module_or_path: new URL("./vitlab_bg.wasm", import.meta.url) });
