// The page's drawing worker: the page's own wasm, started as a module worker, holds the model
// on the CPU (src/main.rs runs the drawing worker where there is no window). The page posts
// its compiled module as the first message (src/web/link.rs), so this worker neither fetches
// nor compiles it; anything else, and it loads the wasm beside the page's script. The build
// stamps the page's content-named script and wasm below (scripts/stamp.sh).
import init from "./vitlab.js";

self.onmessage = ({ data }) => {
  self.onmessage = null;
  init({
    module_or_path: data instanceof WebAssembly.Module ? data : new URL("./vitlab_bg.wasm", import.meta.url),
  });
};
