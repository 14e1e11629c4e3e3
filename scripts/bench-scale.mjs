// The scale benchmark's client (scripts/bench scale), in one of two modes:
//
//   throughput RUNS BASE…  starts RUNS runs of the starter graph at once,
//                          spread over the server processes, and waits for
//                          all to end (their status, polled): runs/s from the
//                          first start to the last end seen. With the simulated
//                          provider answering at once, this is the engine and
//                          the store, not the provider's latency.
//   delay RUNS BASE…       RUNS runs at once, few enough that no process is
//                          saturated, each followed over SSE on a different
//                          process than the one running it (with one
//                          process, the same): the delay of each live event
//                          to its client (received − the event's timestamp;
//                          every process is on this machine, so one clock).
//
// Prints one JSON line.

const [mode, runsArgument, ...bases] = process.argv.slice(2);
const runs = Number(runsArgument);
if (!["throughput", "delay"].includes(mode) || !runs || bases.length === 0) {
  console.error("usage: node scripts/bench-scale.mjs throughput|delay RUNS BASE_URL …");
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
const ended = new Set(["completed", "failed", "cancelled", "interrupted"]);

async function start(base, index) {
  const response = await fetch(`${base}/api/graphs/${graphId}/runs`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ input: { text: `run ${index}` } }),
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`start: ${response.status} ${JSON.stringify(body)}`);
  return body.id;
}

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

/** Waits until every run has ended: runs started together end in about
 * the order they started, so each is asked after the one before it ended
 * (one read per run, whatever their number). */
async function awaitEnds(runIds) {
  const statuses = {};
  for (const [index, id] of runIds.entries()) {
    for (;;) {
      const response = await fetch(`${bases[index % bases.length]}/api/runs/${id}`);
      const { status } = await response.json();
      if (ended.has(status)) {
        statuses[status] = (statuses[status] ?? 0) + 1;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return statuses;
}

const started = Date.now();
if (mode === "throughput") {
  const runIds = await Promise.all(Array.from({ length: runs }, (_, index) => start(bases[index % bases.length], index)));
  const statuses = await awaitEnds(runIds);
  const seconds = (Date.now() - started) / 1000;
  console.log(JSON.stringify({ mode, processes: bases.length, runs, seconds: Number(seconds.toFixed(2)), runs_per_second: Number((runs / seconds).toFixed(1)), ended: statuses }));
} else {
  const results = await Promise.all(
    Array.from({ length: runs }, async (_, index) => {
      const runId = await start(bases[index % bases.length], index);
      return follow(bases[(index + 1) % bases.length], runId);
    }),
  );
  const delays = results.flatMap((result) => result.delays).sort((a, b) => a - b);
  const quantile = (q) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? NaN;
  const endings = {};
  for (const result of results) endings[result.ended] = (endings[result.ended] ?? 0) + 1;
  console.log(JSON.stringify({ mode, processes: bases.length, runs, events: delays.length, delay_p50_ms: quantile(0.5), delay_p99_ms: quantile(0.99), delay_max_ms: delays.at(-1), ended: endings }));
}
