// Measures llama.cpp (through the npm package node-llama-cpp and its prebuilt CPU binaries) on
// one GGUF file with the same figures as nurl-bench: pp512, tg128, ttft300, peak RSS.
// node-llama-cpp is not a project dependency: install it in a scratch folder outside the repo
//   mkdir -p /tmp/bench-llamacpp && cd /tmp/bench-llamacpp && npm install node-llama-cpp
// and run   LLAMACPP_DIR=/tmp/bench-llamacpp node tests/bench/llamacpp-bench.mjs MODEL.gguf [threads] [reps]
// tg128 runs llama.cpp's decode once per token from a JavaScript loop; that per-token overhead
// makes it understate llama.cpp's native generation speed by roughly a third.
import { pathToFileURL } from "node:url";

const dir = process.env.LLAMACPP_DIR ?? "/tmp/bench-llamacpp";
const { getLlama } = await import(pathToFileURL(`${dir}/node_modules/node-llama-cpp/dist/index.js`).href);

const [modelPath, threadsArg, repsArg] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: node llamacpp-bench.mjs MODEL.gguf [threads=2] [reps=3]");
  process.exit(2);
}
const threads = Number(threadsArg ?? 2);
const reps = Number(repsArg ?? 3);

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const now = () => performance.now() / 1000;

let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const t0 = now();
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const loadS = now() - t0;
const nVocab = Math.min(model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length ?? 32000, 32000);
const randomTokens = (n) => Array.from({ length: n }, () => Math.floor(rand() * nVocab));
const context = await model.createContext({ contextSize: 1024, batchSize: 512, threads: { ideal: threads, min: threads } });
const seq = context.getSequence();

await seq.evaluateWithoutGeneratingNewTokens(randomTokens(16)); // warm-up
await seq.clearHistory();

const pp = [];
for (let r = 0; r < reps; r++) {
  await seq.clearHistory();
  const toks = randomTokens(512);
  const s = now();
  await seq.evaluateWithoutGeneratingNewTokens(toks);
  pp.push(512 / (now() - s));
}

const tg = [];
for (let r = 0; r < reps; r++) {
  await seq.clearHistory();
  let n = 0;
  let s = 0;
  // Greedy generation: the first yield ends the 1-token prompt; 128 decode steps are timed after it.
  for await (const _tok of seq.evaluate(randomTokens(1), { temperature: 0 })) {
    if (n === 0) s = now();
    else if (n === 128) break;
    n++;
  }
  tg.push(128 / (now() - s));
}

const ttft = [];
for (let r = 0; r < reps; r++) {
  await seq.clearHistory();
  const s = now();
  for await (const _tok of seq.evaluate(randomTokens(300), { temperature: 0 })) {
    ttft.push(now() - s);
    break;
  }
}

const rssMiB = process.resourceUsage().maxRSS / 1024;
console.log(`llama.cpp via node-llama-cpp: model ${modelPath}, threads ${threads}, load ${loadS.toFixed(2)} s`);
console.log(`pp512   ${median(pp).toFixed(1)} tokens/s`);
console.log(`tg128   ${median(tg).toFixed(1)} tokens/s   (JS per-token loop: understates native llama.cpp by ~1/3)`);
console.log(`ttft300 ${(median(ttft) * 1000).toFixed(1)} ms`);
console.log(`peak RSS ${rssMiB.toFixed(1)} MiB (node process)`);
console.log(JSON.stringify({ engine: "llama.cpp", model: modelPath, threads, pp512: median(pp), tg128: median(tg),
  ttft300_ms: median(ttft) * 1000, peak_rss_mib: rssMiB, load_s: loadS }));
await context.dispose();
await model.dispose();
await llama.dispose();
