// The service on every core (PROCESSES=N or --processes N): a primary process forks N
// copies of main.mjs with node:cluster. Each copy parses, routes and answers requests
// on its own event loop, with its own offthread pool; the pools split the machine's
// cores between them (POOL_THREADS per process = cores / N, at least 1), so N processes
// never start more kernel threads than one process would. Connections reach the copies
// through SO_REUSEPORT listeners where the Node line has them (22.12+, 24, 26: the
// kernel spreads new connections, no hand-off through the primary), else through
// cluster's round-robin in the primary (Node 20).
//
// The primary answers nothing itself. It prints one "listening on URL" once every copy
// listens, replaces a copy that dies (at most 5 in 30 s, then it stops them all and
// exits 1), aggregates /metrics over the copies (prom-client's AggregatorRegistry: any
// copy asked for /metrics asks the primary), and on SIGTERM/SIGINT tells every copy to
// finish its accepted requests and stop, exiting 0 once all exited 0.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import client from 'prom-client';

const SHUTDOWN = 'offthread-http:shutdown';
const LISTENING = 'offthread-http:listening';
const METRICS_ASK = 'offthread-http:metrics?';
const METRICS = 'offthread-http:metrics';
const CRASHES_ALLOWED = 5;
const CRASH_WINDOW_MS = 30_000;

/** Whether this Node can open SO_REUSEPORT listeners (`listen({ reusePort })`: 22.12+, 23.1+). */
export function hasReusePort() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** True in a copy started by the primary. */
export const isClusterCopy = cluster.isWorker;

/** Pool threads for one of `processes` copies: the machine's cores split between them. */
export function threadsPerProcess(/** @type {number} */ processes) {
  return Math.max(1, Math.floor(availableParallelism() / processes));
}

/**
 * In a copy: the listen options (SO_REUSEPORT, not the primary's shared handle, where
 * the Node line has it) and the cluster side of /metrics.
 * @param {import('prom-client').Registry} register the copy's own metrics
 */
export function copySide(register) {
  new client.AggregatorRegistry(); // answers the primary's requests for this copy's metrics
  client.AggregatorRegistry.setRegistries([register]);
  let next = 0;
  /** @type {Map<number, { resolve: (text: string) => void, reject: (err: Error) => void }>} */
  const asked = new Map();
  process.on('message', (/** @type {any} */ msg) => {
    if (msg?.type !== METRICS) return;
    const waiting = asked.get(msg.id);
    asked.delete(msg.id);
    if (msg.error) waiting?.reject(new Error(`metrics of the other processes: ${msg.error}`));
    else waiting?.resolve(msg.text);
  });
  return {
    listen: hasReusePort() ? { reusePort: true, exclusive: true } : {},
    /** /metrics over every copy. @returns {Promise<string>} */
    metrics() {
      const id = next++;
      return new Promise((resolve, reject) => {
        asked.set(id, { resolve, reject });
        process.send?.({ type: METRICS_ASK, id });
      });
    },
    /** Tells the primary this copy listens on `url`. */
    listening(/** @type {string} */ url) {
      process.send?.({ type: LISTENING, url });
    },
    /** Calls `stop` when the primary says so (once; a signal may have started it already). */
    onShutdown(/** @type {() => void} */ stop) {
      process.on('message', (/** @type {any} */ msg) => {
        if (msg?.type === SHUTDOWN) stop();
      });
    },
  };
}

/**
 * The primary: forks `processes` copies of this script and runs until they have stopped.
 * @param {{ processes: number, port: number, mode: string, shutdownTimeoutMs: number }} opts
 */
export async function runPrimary({ processes, port, mode, shutdownTimeoutMs }) {
  const aggregator = new client.AggregatorRegistry();
  const threads = process.env.POOL_THREADS ?? String(threadsPerProcess(processes));
  const reusePort = hasReusePort();
  let stopping = false;
  /** @type {number[]} */
  const crashes = [];
  /** @type {Set<import('node:cluster').Worker>} */
  const copies = new Set();
  /** @type {string | undefined} */
  let url;
  let listening = 0;

  /** Forks one copy; with SO_REUSEPORT all copies after the first take the first's port. */
  const fork = (/** @type {number} */ onPort) => {
    const copy = cluster.fork({ PORT: String(onPort), POOL_THREADS: threads });
    copies.add(copy);
    copy.on('message', (/** @type {any} */ msg) => {
      if (msg?.type === LISTENING) {
        onListening(msg.url);
      } else if (msg?.type === METRICS_ASK) {
        aggregator.clusterMetrics().then(
          (text) => copy.isConnected() && copy.send({ type: METRICS, id: msg.id, text }),
          (err) => copy.isConnected() && copy.send({ type: METRICS, id: msg.id, error: String(err?.message ?? err) }),
        );
      }
    });
    copy.on('exit', (code, signal) => {
      copies.delete(copy);
      if (stopping) {
        if (code !== 0) failed = true;
        if (copies.size === 0) finish();
        return;
      }
      console.error(`offthread-http: process ${copy.process.pid} exited (${signal ?? code}); starting another`);
      const now = Date.now();
      crashes.push(now);
      while (crashes.length > 0 && now - crashes[0] > CRASH_WINDOW_MS) crashes.shift();
      if (crashes.length > CRASHES_ALLOWED) {
        console.error(`offthread-http: ${crashes.length} processes died within ${CRASH_WINDOW_MS / 1000} s, stopping`);
        failed = true;
        stop('crashes');
        return;
      }
      // SO_REUSEPORT: bind the port the others have. Round-robin: ask for the primary's
      // handle by the same key as the first copies (PORT=0 included), or it binds anew.
      fork(reusePort ? (actualPort ?? port) : port);
    });
    return copy;
  };

  /** @type {number | undefined} */
  let actualPort;
  let started = false;
  const onListening = (/** @type {string} */ at) => {
    if (actualPort === undefined) {
      actualPort = Number(new URL(at).port);
      url = at;
      // PORT=0 with SO_REUSEPORT: the others must bind the port the first one got.
      if (reusePort) for (let i = 1; i < processes; i++) fork(actualPort);
    }
    listening++;
    if (!started && listening >= processes) {
      started = true;
      console.log(`offthread-http (${mode}, ${processes} processes) listening on ${url}`);
    }
  };

  let failed = false;
  /** @type {(value?: unknown) => void} */
  let done = () => {};
  const finished = new Promise((resolve) => {
    done = resolve;
  });
  const finish = () => {
    console.log(`offthread-http: all ${processes} processes stopped`);
    done();
  };
  const stop = (/** @type {string} */ why) => {
    if (stopping) {
      console.error(`offthread-http: ${why} again, exiting now`);
      for (const copy of copies) copy.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    console.log(`offthread-http: ${why}, finishing accepted requests in ${copies.size} processes`);
    const force = setTimeout(() => {
      console.error(`offthread-http: shutdown took over ${shutdownTimeoutMs} ms, exiting`);
      for (const copy of copies) copy.process.kill('SIGKILL');
      process.exit(1);
    }, shutdownTimeoutMs + 1000);
    force.unref();
    if (copies.size === 0) finish();
    for (const copy of copies) if (copy.isConnected()) copy.send({ type: SHUTDOWN });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  // With SO_REUSEPORT the first copy picks the port (PORT=0) and the rest follow it.
  fork(port);
  if (!reusePort) for (let i = 1; i < processes; i++) fork(port);
  await finished;
  process.exit(failed ? 1 : 0);
}
