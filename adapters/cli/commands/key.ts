import type { CatalogService } from "../../../src/catalog/catalog-service.js";
import {
  KEY_EXPIRY_PRESETS,
  type PoolKeyRecord,
  type PoolRecord,
} from "../../../src/catalog/types.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { serializeMintedPoolKey, serializePoolKey } from "../../hono/control/serializers.js";
import { DATA_DIR_OPTION, NO_SECRETS, READ_ONLY, withCatalog } from "../catalog-session.js";
import {
  type CommandSpec,
  optionalString,
  type ParsedCommand,
  parseIdFlag,
  requiredString,
  withFlagNames,
} from "../command.js";

const POOL_OPTION = {
  pool: {
    type: "string",
    placeholder: "<subdomain>",
    description: "The pool's subdomain (see sluice status).",
    required: true,
  },
} as const;
const JSON_OPTION = {
  json: {
    type: "boolean",
    description: "Print JSON for scripts (the Control API's PoolKey fields) instead of text.",
  },
} as const;

/** Mint request fields → the flags that set them, for validation messages. */
const KEY_FLAGS = {
  label: "label",
  access: "access",
  expires_preset: "expires",
  expires_at: "expires-at",
};

async function requirePool(catalog: CatalogService, args: ParsedCommand): Promise<PoolRecord> {
  const subdomain = requiredString(args, "pool");
  const pool = await catalog.store.findPoolBySubdomain(subdomain);
  if (!pool) {
    throw new InvalidArgumentError(
      `No pool with subdomain "${subdomain}". "sluice status" lists the pools; "sluice apply" creates them.`,
    );
  }
  return pool;
}

const isoDate = (epochMs: number) => new Date(epochMs).toISOString();

function keyState(key: PoolKeyRecord, now: number): string {
  if (key.revokedAt !== null) return `revoked ${isoDate(key.revokedAt)}`;
  if (key.expiresAt === null) return "never expires";
  return `${now >= key.expiresAt ? "expired" : "expires"} ${isoDate(key.expiresAt)}`;
}

function keyLine(key: PoolKeyRecord, now: number): string {
  const label = key.label === "" ? "(no label)" : `"${key.label}"`;
  return `${key.id}  ${label}  …${key.lastFour}  ${key.access}  created ${isoDate(key.createdAt)}, ${keyState(key, now)}`;
}

/**
 * `sluice key create`: mints a pool key (the Control API's rules) and prints it once.
 *
 * @example
 * ```ts
 * await runCli(["key", "create", "--pool", "chat", "--label", "laptop", "--expires", "7d"], io);
 * ```
 */
export const keyCreateCommand: CommandSpec = {
  name: "key create",
  summary: "Create a pool key for the Lock API and the proxy. The key is printed once.",
  options: {
    ...POOL_OPTION,
    label: {
      type: "string",
      placeholder: "<text>",
      description: "A name for the key, at most 60 characters. Default: none.",
    },
    access: {
      type: "string",
      placeholder: "read|write",
      description: "write (default): every method; read: GET, HEAD, OPTIONS and the pool's reads.",
    },
    expires: {
      type: "string",
      placeholder: KEY_EXPIRY_PRESETS.join("|"),
      description: "Expiry from now. Default: none (the key works until revoked).",
    },
    "expires-at": {
      type: "string",
      placeholder: "<date-time>",
      description: "Expiry as an ISO-8601 date-time with a zone, instead of --expires.",
    },
    ...JSON_OPTION,
    ...DATA_DIR_OPTION,
  },
  details: [
    "Only the key's hash is stored: copy the key when it is printed. On a pool with origin signing, its signing secret is printed once too.",
    "Send it as the header X-Svc-Key: <key> to the pool's host or its Lock API routes.",
  ],
  examples: [
    "sluice key create --pool chat --label laptop --expires 7d",
    "KEY=$(sluice key create --pool chat --access read --json | jq -r .key)",
  ],
  run: (args, io) =>
    withCatalog(args, io, async (catalog) => {
      const pool = await requirePool(catalog, args);
      const minted = await withFlagNames(KEY_FLAGS, () =>
        catalog.mintPoolKey({
          teamId: pool.teamId,
          subdomain: pool.subdomain,
          label: optionalString(args, "label"),
          access: optionalString(args, "access"),
          expiresPreset: optionalString(args, "expires"),
          expiresAt: optionalString(args, "expires-at"),
        }),
      );
      if (args.values.json === true) {
        io.out(JSON.stringify(serializeMintedPoolKey(pool, minted)));
        return 0;
      }
      const expiry =
        minted.key.expiresAt === null
          ? "never expires"
          : `expires ${isoDate(minted.key.expiresAt)}`;
      io.out(
        `Created ${minted.key.access} key ${minted.key.id} for pool ${pool.subdomain}; ${expiry}.`,
      );
      io.out("Copy it now, it is not shown again:");
      io.out("");
      io.out(`  ${minted.plaintext}`);
      io.out("");
      if (minted.signingSecret !== undefined) {
        io.out("The pool signs requests to its origin; give the origin this signing secret:");
        io.out("");
        io.out(`  ${minted.signingSecret}`);
        io.out("");
      }
      if (minted.requestSecret !== undefined) {
        io.out(
          `The pool requires signed requests; the caller signs with this secret and key id ${minted.key.id}:`,
        );
        io.out("");
        io.out(`  ${minted.requestSecret}`);
        io.out("");
      }
      return 0;
    }),
};

/**
 * `sluice key list`: a pool's keys, metadata only (never a key or its hash).
 *
 * @example
 * ```ts
 * await runCli(["key", "list", "--pool", "chat"], io);
 * ```
 */
export const keyListCommand: CommandSpec = {
  name: "key list",
  summary: "List a pool's keys, revoked ones included (never the keys themselves).",
  options: { ...POOL_OPTION, ...JSON_OPTION, ...DATA_DIR_OPTION },
  examples: ["sluice key list --pool chat", "sluice key list --pool chat --json"],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const pool = await requirePool(catalog, args);
        const keys = await catalog.store.listPoolKeys(pool.id);
        if (args.values.json === true) {
          io.out(JSON.stringify(keys.map((key) => serializePoolKey(pool, key))));
          return 0;
        }
        if (keys.length === 0) {
          io.out(
            `Pool ${pool.subdomain} has no keys. Create one with "sluice key create --pool ${pool.subdomain}".`,
          );
          return 0;
        }
        io.out(`Keys of pool ${pool.subdomain} (id, label, last four characters, access):`);
        const now = catalog.clock.now();
        for (const key of keys) io.out(`  ${keyLine(key, now)}`);
        return 0;
      },
      READ_ONLY,
    ),
};

/**
 * `sluice key revoke`: revokes a pool key by id (see `sluice key list`).
 *
 * @example
 * ```ts
 * await runCli(["key", "revoke", "--pool", "chat", "--id", "3"], io);
 * ```
 */
export const keyRevokeCommand: CommandSpec = {
  name: "key revoke",
  summary: "Revoke a pool key; it stops working at once.",
  options: {
    ...POOL_OPTION,
    id: {
      type: "string",
      placeholder: "<key-id>",
      description: "Id from sluice key list.",
      required: true,
    },
    ...DATA_DIR_OPTION,
  },
  details: [
    "A slot the key holds can still be released with it, so revoking never strands slots; renewing them is refused.",
  ],
  examples: ["sluice key revoke --pool chat --id 3"],
  run: (args, io) =>
    withCatalog(
      args,
      io,
      async (catalog) => {
        const pool = await requirePool(catalog, args);
        const keyId = parseIdFlag(requiredString(args, "id"), "key");
        const before = await catalog.store.getPoolKey(pool.id, keyId);
        const revoked = await catalog.revokePoolKey(pool.teamId, pool.subdomain, keyId);
        if (!before || !revoked) {
          io.err(`Error: pool ${pool.subdomain} has no key with id ${keyId}.`);
          return 1;
        }
        if (before.revokedAt !== null) {
          io.out(
            `Key ${keyId} of pool ${pool.subdomain} was already revoked on ${isoDate(before.revokedAt)}.`,
          );
        } else {
          io.out(`Revoked key ${keyId} of pool ${pool.subdomain}.`);
        }
        return 0;
      },
      NO_SECRETS,
    ),
};
