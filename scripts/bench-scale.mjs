// The scale benchmark's client (scripts/bench scale): starts RUNS runs of
// the starter graph at once, spread over the server processes given, and
// follows each run's events on a different process than the one that runs
// it (with one process, the same). Prints runs/s (first start to last run
// ended) and the delay of each live event to its client (received − the
// event's timestamp; every process is on this machine, so one clock).
//
//   node scripts/bench-scale.mjs RUNS http://127.0.0.1:PORT …

const [runsArgument, ...bases] = process.argv.slice(2);
const runs = Number(runsArgument);
if (!runs || bases.length === 0) {
  console.error("usage: node scripts/bench-scale.mjs RUNS BASE_URL …");
  process.exit(2);
}

// The starter graph, created as the home page's "New graph" does.
const created = await fetch(`${bases[0]}/new`, { redirect: "manual" });
const location = created.headers.get("location") ?? "";
const match = location.match(/^\/g\/([^#]+)#edit=(.+)$/);
if (!match) {
  console.error(`cannot create the starter graph: ${created.status} ${location}`);
  process.exit(1);
}
const [, graphId, token] = match;

const terminal = new Set(["run.completed", "run.failed", "run.cancelled", "run.interrupted"]);

/** Follows a run's events until it ends; returns delays of live events and how it ended. */
async function follow(base, runId) {
  const response = await fetch(`${base}/api/runs/${runId}/events`, {
    headers: { accept: "text/event-stream" },
  });
  const connectedAt = Date.now();
  const decoder = new TextDecoder();
  const delays = [];
  let buffer = "";
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "";
      let data = "";
      for (const line of message.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (!data) continue;
      const received = Date.now();
      const { ts } = JSON.parse(data);
      // Events logged before the client connected are replayed, not live.
      if (ts >= connectedAt) delays.push(received - ts);
      if (terminal.has(name)) return { delays, ended: name };
    }
  }
  return { delays, ended: "stream closed" };
}

const started = Date.now();
const follows = [];
for (let index = 0; index < runs; index += 1) {
  const runner = bases[index % bases.length];
  const follower = bases[(index + 1) % bases.length];
  follows.push(
    (async () => {
      const response = await fetch(`${runner}/api/graphs/${graphId}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ input: { text: `run ${index}` } }),
      });
      const body = await response.json();
      if (response.status !== 201) throw new Error(`start: ${response.status} ${JSON.stringify(body)}`);
      return follow(follower, body.id);
    })(),
  );
}
const results = await Promise.all(follows);
const seconds = (Date.now() - started) / 1000;
const delays = results.flatMap((result) => result.delays).sort((a, b) => a - b);
const quantile = (q) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
const ended = {};
for (const result of results) ended[result.ended] = (ended[result.ended] ?? 0) + 1;
console.log(
  JSON.stringify({
    processes: bases.length,
    runs,
    seconds: Number(seconds.toFixed(2)),
    runs_per_second: Number((runs / seconds).toFixed(1)),
    events: delays.length,
    delay_p50_ms: quantile(0.5),
    delay_p99_ms: quantile(0.99),
    delay_max_ms: delays.at(-1),
    ended,
  }),
);
