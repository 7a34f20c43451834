// The JavaScript side of tests/test_js_runtime.py: reads JSON lines on stdin and answers one line
// each, so that one node process serves a whole batch. The first line names the models,
// {"models": {"2": PATH, ...}}; it answers {"ready": true, "obs_versions": {...}}. Every other line
// is {"position": {...}, "model": "2" | null, "version": 4}, answered with the observation and the
// mask as base64 of their float32 bytes and, when a model is named, the policy's move.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import * as ort from "onnxruntime-web";
import { OBS_VERSION, actionMask, encodeObservation, loadPolicy, policyMove } from "../../allfives/web/static/allfives.js";

ort.env.wasm.numThreads = 1;
const b64 = (array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString("base64");
const policies = {};
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  let answer;
  if (request.models) {
    for (const [key, path] of Object.entries(request.models)) policies[key] = await loadPolicy(ort, readFileSync(path));
    answer = { ready: true, obs_versions: Object.fromEntries(Object.entries(policies).map(([k, p]) => [k, p.obsVersion])) };
  } else {
    const { position, model, version } = request;
    answer = { obs: b64(encodeObservation(position, version ?? OBS_VERSION)), mask: b64(actionMask(position)) };
    if (model) answer.action = await policyMove(policies[model], position);
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
