import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { systemClock } from "../../src/index.js";
import type { Harness } from "../adaptation.js";
import { seededRandom } from "./random.js";
import type { BenchClock } from "./strategies.js";
import type { UpstreamAnswer } from "./upstream.js";
import { SimulatedUpstream } from "./upstream.js";

/** Real time, for the HTTP variant. */
export const realClock: BenchClock = {
  now: () => systemClock.now(),
  setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
  clearTimeout: (handle) => systemClock.clearTimeout(handle),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * The real-HTTP harness: each run's upstream is the simulated one behind an HTTP server on
 * loopback, in real time. Sluice calls it with `governor.fetch`; the oracle with `fetch`.
 * Results move with the machine's load (timers fire late, answers queue behind other work).
 *
 * @example
 * ```ts
 * const [oracle, sluice] = await runAdaptation(scenario, httpHarness);
 * ```
 */
export function httpHarness(): Harness {
  return {
    clock: realClock,
    async upstream(limits, seed) {
      const upstream = new SimulatedUpstream(realClock, limits, seededRandom(seed));
      const server = createServer((request, response) => {
        request.resume();
        void upstream.call().then((answer) => {
          response.writeHead(answer.status, answer.headers);
          response.end(answer.status === 200 ? "ok" : "slow down");
        });
      });
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/work`;
      return {
        upstream,
        url,
        call: () => fetchAnswer(url),
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    },
    pass: (ms) => realClock.sleep(ms),
  };
}

async function fetchAnswer(url: string): Promise<UpstreamAnswer> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return { status: response.status, headers: Object.fromEntries(response.headers) };
}
