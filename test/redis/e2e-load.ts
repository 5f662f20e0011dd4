import { Agent } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { type Endpoint, NoAnswerError, type Reply, send } from "./e2e-http.js";

/** A pool as clients reach it: by its subdomain, and (Lock API callers) its origin's port. */
export interface PoolTarget {
  subdomain: string;
  originPort: number;
}

/** What the clients of one run did; `problems` lists everything that must not happen. */
export class LoadStats {
  lockGranted = 0;
  lockReleased = 0;
  /**
   * Releases whose first attempt went to the server as it was killed: it may have released the
   * slot without answering, so the retry elsewhere may rightly answer `released: false`.
   */
  lockReleaseCut = 0;
  proxyAnswered = 0;
  rejected = 0;
  timedOut = 0;
  /** Grants and answers by phase: before the kill and after it. */
  killedAt = Number.POSITIVE_INFINITY;
  readonly doneByPhase = { beforeKill: 0, afterKill: 0 };
  readonly timedOutByPhase = { beforeKill: 0, afterKill: 0 };
  /** Requests cut because the test killed the server they were on (allowed). */
  cutByKill = 0;
  readonly servedBy = new Map<string, number>();
  readonly problems: string[] = [];

  served(endpoint: Endpoint): void {
    this.doneByPhase[Date.now() < this.killedAt ? "beforeKill" : "afterKill"]++;
    this.servedBy.set(endpoint.name, (this.servedBy.get(endpoint.name) ?? 0) + 1);
  }

  problem(text: string): void {
    // The first few tell the story; thousands would drown it.
    if (this.problems.length < 50) this.problems.push(text);
  }
}

/** Settings shared by every client of a run. */
export interface LoadPlan {
  endpoints: readonly Endpoint[];
  pools: readonly PoolTarget[];
  poolDomain: string;
  /** No client starts new work after this instant (Date.now()). */
  until: number;
  /** Queue wait each acquire and proxied request asks for. */
  waitMs: number;
  stats: LoadStats;
}

const originAgent = new Agent({ keepAlive: true, maxSockets: 1_024 });

/** The client's own server while it lives, else one of the survivors. */
function endpointFor(plan: LoadPlan, client: number): Endpoint {
  const home = plan.endpoints[client % plan.endpoints.length]!;
  if (!home.dead) return home;
  const alive = plan.endpoints.filter((endpoint) => !endpoint.dead);
  return alive[client % alive.length]!;
}

/**
 * Sends `call` to `first`, and when that server gives no answer because it was killed, to the
 * survivors in turn (what a load balancer does). A live server giving no answer is a problem.
 */
async function onAnyServer(
  plan: LoadPlan,
  first: Endpoint,
  call: (endpoint: Endpoint) => Promise<Reply>,
  onCut: () => void = () => {},
): Promise<Reply> {
  const order = [first, ...plan.endpoints.filter((endpoint) => endpoint !== first)];
  let lastError: unknown = null;
  for (const endpoint of order) {
    if (endpoint.dead && endpoint !== first) continue;
    try {
      return await call(endpoint);
    } catch (error) {
      if (!(error instanceof NoAnswerError)) throw error;
      if (endpoint.dead) onCut();
      else plan.stats.problem(error.message);
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * One Lock API caller's round: acquire (queueing up to `waitMs`), call the origin directly
 * while renewing on the grant's interval, release with the origin's status.
 */
async function lockRound(plan: LoadPlan, endpoint: Endpoint, pool: PoolTarget): Promise<void> {
  const { stats } = plan;
  const base = `/pools/${pool.subdomain}/lock`;
  const acquired = await send(endpoint, {
    path: `${base}/acquire`,
    body: JSON.stringify({ waitMs: plan.waitMs }),
  });
  if (acquired.status !== 200) return countRefusal(plan, "lock acquire", acquired);
  stats.lockGranted++;
  stats.served(endpoint);
  const { slotId, renewIntervalMs } = JSON.parse(acquired.body) as {
    slotId: string;
    renewIntervalMs: number;
  };
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = onAnyServer(plan, endpoint, (target) =>
      send(target, { path: `${base}/${slotId}/renew` }),
    ).then(
      (reply) => {
        if (reply.status !== 200) stats.problem(`renew ${reply.status} ${reply.body}`);
      },
      (error: Error) => stats.problem(`renew: ${error.message}`),
    );
  }, renewIntervalMs);
  let status = 0;
  try {
    const answer = await send(
      { name: "origin", port: pool.originPort, agent: originAgent },
      { method: "GET", path: "/work" },
    );
    status = answer.status;
    if (status !== 200) stats.problem(`origin answered ${status}`);
  } finally {
    clearInterval(timer);
    await renewing;
  }
  let cut = false;
  const released = await onAnyServer(
    plan,
    endpoint,
    (target) =>
      send(target, { path: `${base}/${slotId}/release`, body: JSON.stringify({ status }) }),
    () => {
      cut = true;
    },
  );
  const answer =
    released.status === 200 ? (JSON.parse(released.body) as { released?: unknown }) : {};
  if (answer.released === true) stats.lockReleased++;
  // The killed server may have released it without answering: the retry rightly finds nothing.
  else if (cut && answer.released === false) stats.lockReleaseCut++;
  else stats.problem(`release ${released.status} ${released.body}`);
}

/** One proxied call through the pool host, queueing up to `waitMs`. */
async function proxyRound(plan: LoadPlan, endpoint: Endpoint, pool: PoolTarget): Promise<void> {
  const reply = await send(endpoint, {
    method: "GET",
    path: "/work",
    host: `${pool.subdomain}.${plan.poolDomain}`,
    headers: { "x-svc-queue-timeout-ms": String(plan.waitMs) },
  });
  if (reply.status !== 200) return countRefusal(plan, "proxy", reply);
  if (reply.headers["x-origin-pool"] !== pool.subdomain) {
    plan.stats.problem(`proxy reached the wrong origin: ${String(reply.headers["x-origin-pool"])}`);
  }
  plan.stats.proxyAnswered++;
  plan.stats.served(endpoint);
}

async function countRefusal(plan: LoadPlan, what: string, reply: Reply): Promise<void> {
  if (reply.status === 429) {
    plan.stats.rejected++;
    // Back off a little, as a caller honouring Retry-After would.
    await sleep(20 + Math.random() * 30);
  } else if (reply.status === 504) {
    plan.stats.timedOut++;
    plan.stats.timedOutByPhase[Date.now() < plan.stats.killedAt ? "beforeKill" : "afterKill"]++;
  } else {
    plan.stats.problem(`${what} answered ${reply.status} ${reply.body.slice(0, 200)}`);
  }
}

/**
 * Runs one client until `plan.until`: client `n` uses server `n mod servers` (a survivor once
 * its server is killed), goes through the Lock API or the proxy, and alternates pools.
 */
export async function runClient(
  plan: LoadPlan,
  client: number,
  via: "lock" | "proxy",
): Promise<void> {
  for (let round = 0; Date.now() < plan.until; round++) {
    const endpoint = endpointFor(plan, client);
    const pool = plan.pools[(client + round) % plan.pools.length]!;
    try {
      if (via === "lock") await lockRound(plan, endpoint, pool);
      else await proxyRound(plan, endpoint, pool);
    } catch (error) {
      if (error instanceof NoAnswerError && endpoint.dead) plan.stats.cutByKill++;
      else plan.stats.problem(`${via}: ${(error as Error).message}`);
    }
  }
}

/** A slot taken through the Lock API and kept alive by renewing, never released. */
export interface HeldSlot {
  slotId: string;
  pool: string;
  /** Stops renewing (what happens when the holder's process dies). */
  abandon(): void;
}

/**
 * Takes a slot of `pool` through `endpoint` and renews it there until abandoned or until the
 * server stops answering: a caller whose slot lives and dies with that server.
 */
export async function holdSlot(
  endpoint: Endpoint,
  pool: string,
  waitMs: number,
): Promise<HeldSlot> {
  const base = `/pools/${pool}/lock`;
  const acquired = await send(endpoint, {
    path: `${base}/acquire`,
    body: JSON.stringify({ waitMs }),
    timeoutMs: waitMs + 10_000,
  });
  if (acquired.status !== 200) {
    throw new Error(`holder could not acquire: ${acquired.status} ${acquired.body}`);
  }
  const { slotId, renewIntervalMs } = JSON.parse(acquired.body) as {
    slotId: string;
    renewIntervalMs: number;
  };
  const timer = setInterval(() => {
    send(endpoint, { path: `${base}/${slotId}/renew` }).catch(() => clearInterval(timer));
  }, renewIntervalMs);
  return { slotId, pool, abandon: () => clearInterval(timer) };
}
