// `npm test`: every end-to-end file, two at a time, then each file with a failure again alone.
//
// One file at a time left the 2-core machine's CPU half idle (51 % busy, 1,543 s): the tests
// wait on browsers more than they compute. Two at a time take ~1,000 s (83 % busy). Under that
// load a test that races two tabs or a worker against a click can meet a window that is
// milliseconds wide alone and seconds wide loaded: such a failure is printed, its file runs
// again alone, and the run fails only if it fails there too. The tests that failed only under
// load are named at the end, so that none is forgotten.
import { run } from "node:test";
import { tap } from "node:test/reporters";
import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
// The files named, or every one.
const every = process.argv.length > 2
  ? process.argv.slice(2)
  : readdirSync(here).filter((name) => name.endsWith(".test.mjs")).sort().map((name) => join(here, name));
const TWO_AT_A_TIME = 2;

/** Runs `files`, `concurrency` at a time, printing TAP; the failed tests, by file. */
async function runFiles(files, concurrency) {
  const failed = new Map();
  const stream = run({ files, concurrency, timeout: 600_000 });
  stream.on("test:fail", ({ file, name, details }) => {
    // A file's own failure (a hook, an import) has no test of its own: it counts as one.
    if (!file || details?.type === "suite") return;
    failed.set(file, [...(failed.get(file) ?? []), name]);
  });
  await new Promise((resolve, reject) => {
    const out = stream.compose(tap);
    out.on("end", resolve);
    out.on("error", reject);
    out.pipe(process.stdout, { end: false });
  });
  return failed;
}

const started = Date.now();
const loaded = await runFiles(every, TWO_AT_A_TIME);
let alone = new Map();
if (loaded.size) {
  console.log(`\n# failed two files at a time: ${[...loaded].map(([file, tests]) => `${basename(file)} (${tests.join("; ")})`).join(", ")}`);
  console.log("# those files again, alone:");
  alone = await runFiles([...loaded.keys()], 1);
}
const onlyLoaded = [...loaded].flatMap(([file, tests]) => tests.filter((test) => !(alone.get(file) ?? []).includes(test)).map((test) => `${basename(file)}: ${test}`));
if (onlyLoaded.length) console.log(`\n# failed under load only (passed alone):\n${onlyLoaded.map((line) => `#   ${line}`).join("\n")}`);
console.log(`\n# end-to-end: ${every.length} files in ${Math.round((Date.now() - started) / 1000)} s`);
if (alone.size) {
  console.log(`# failed alone too: ${[...alone].map(([file, tests]) => `${basename(file)} (${tests.join("; ")})`).join(", ")}`);
  process.exitCode = 1;
}
