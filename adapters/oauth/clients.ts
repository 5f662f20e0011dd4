import * as v from "valibot";
import { hasControlCharacter, PLAIN_TEXT_MESSAGE } from "../../src/catalog/plain-text.js";
import type { Clock } from "../../src/clock/clock.js";
import { OAuthProtocolError } from "./oauth-error.js";
import { CLIENT_ID_PREFIX, newOAuthSecret } from "./oauth-secrets.js";
import { redirectUriProblem } from "./redirect-uris.js";
import type { OAuthStore } from "./types.js";

/** A client as the authorization endpoint needs it, however it was registered. */
export interface ResolvedClient {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  /** `metadata-document`: the client_id is the URL of its metadata (CIMD); `registered`: DCR. */
  kind: "metadata-document" | "registered";
}

const CLIENT_NAME_MAX = 100;
const MAX_REDIRECT_URIS = 10;
const SUPPORTED_GRANT_TYPES = ["authorization_code", "refresh_token"];

/** Fields a registration request or a metadata document may carry (others are ignored). */
const ClientMetadataSchema = v.looseObject(
  {
    redirect_uris: v.pipe(
      v.array(v.string(), "redirect_uris must be an array of URLs"),
      v.minLength(1, "redirect_uris must name at least one URL"),
      v.maxLength(MAX_REDIRECT_URIS, `redirect_uris may name at most ${MAX_REDIRECT_URIS} URLs`),
    ),
    client_name: v.optional(
      v.pipe(
        v.string("client_name must be a string"),
        v.trim(),
        v.maxLength(CLIENT_NAME_MAX, `client_name may have at most ${CLIENT_NAME_MAX} characters`),
        // Shown on the consent page and in Connected apps: the catalog's rule for names.
        v.check((name) => !hasControlCharacter(name), `client_name: ${PLAIN_TEXT_MESSAGE}`),
      ),
    ),
    grant_types: v.optional(v.array(v.string(), "grant_types must be an array of strings")),
    response_types: v.optional(v.array(v.string(), "response_types must be an array of strings")),
    token_endpoint_auth_method: v.optional(v.string()),
  },
  missingField,
);
type ClientMetadata = v.InferOutput<typeof ClientMetadataSchema>;

/** The object schema's own issue: a required field left out (the input is an object by then). */
function missingField(issue: v.BaseIssue<unknown>): string {
  const key = issue.expected?.match(/^"(.+)"$/)?.[1];
  return key === undefined ? "The client metadata must be a JSON object." : `${key} is required.`;
}

/**
 * Checks client metadata (RFC 7591 §2): valid redirect URIs, only the code flow, a public
 * client. Throws `invalid_redirect_uri` / `invalid_client_metadata` (or `errorCode` for a
 * metadata document, which is not a registration).
 */
function checkMetadata(input: unknown, errorCode?: string): ClientMetadata {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new OAuthProtocolError(
      errorCode ?? "invalid_client_metadata",
      errorCode === undefined
        ? "The body must be a JSON object."
        : "The metadata document must be a JSON object.",
    );
  }
  const parsed = v.safeParse(ClientMetadataSchema, input);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw new OAuthProtocolError(errorCode ?? "invalid_client_metadata", issue.message);
  }
  const metadata = parsed.output;
  for (const uri of metadata.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      throw new OAuthProtocolError(
        errorCode ?? "invalid_redirect_uri",
        `Redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}.`,
      );
    }
  }
  const unsupportedGrant = metadata.grant_types?.find((t) => !SUPPORTED_GRANT_TYPES.includes(t));
  if (unsupportedGrant !== undefined || metadata.grant_types?.length === 0) {
    throw new OAuthProtocolError(
      errorCode ?? "invalid_client_metadata",
      "grant_types may only list authorization_code and refresh_token.",
    );
  }
  if (metadata.response_types?.some((type) => type !== "code")) {
    throw new OAuthProtocolError(
      errorCode ?? "invalid_client_metadata",
      'response_types may only list "code".',
    );
  }
  return metadata;
}

/**
 * Dynamic Client Registration (RFC 7591): stores a public client (no secret: it proves
 * itself with PKCE) and returns the registration response. A requested confidential
 * `token_endpoint_auth_method` is answered with `none`, as §3.2.1 allows.
 *
 * @example
 * ```ts
 * const response = await registerClient(store, clock, { redirect_uris: ["http://127.0.0.1:3000/cb"] });
 * response.client_id; // "slc_client_…"
 * ```
 */
export async function registerClient(
  store: OAuthStore,
  clock: Clock,
  body: unknown,
): Promise<Record<string, unknown>> {
  const metadata = checkMetadata(body);
  const createdAt = clock.now();
  const client = {
    clientId: newOAuthSecret(CLIENT_ID_PREFIX),
    clientName: metadata.client_name || "Unnamed client",
    redirectUris: [...new Set(metadata.redirect_uris)],
    createdAt,
  };
  await store.insertClient(client);
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(createdAt / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    grant_types: SUPPORTED_GRANT_TYPES,
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

/**
 * Whether a client_id is the URL of a Client ID Metadata Document (a URL with a path; the
 * fetcher refuses one that is not https): the URL, or null for a registered client's id.
 *
 * @example
 * ```ts
 * metadataDocumentUrl("https://app.example/oauth/client.json"); // URL
 * metadataDocumentUrl("slc_client_…"); // null
 * ```
 */
export function metadataDocumentUrl(clientId: string): URL | null {
  if (!/^https?:\/\//.test(clientId)) return null;
  try {
    const url = new URL(clientId);
    return url.pathname.length > 1 && url.hash === "" ? url : null;
  } catch {
    return null;
  }
}

/** How clients are looked up: the store for registered ones, a fetcher for documents. */
export interface ClientResolverDeps {
  store: OAuthStore;
  fetchJson: (url: URL) => Promise<unknown>;
}

/**
 * The client named by a `client_id`: a URL is fetched as its Client ID Metadata Document
 * (whose own `client_id` must be that URL, and which may not claim a client secret); any
 * other value must be a registered client. Unknown or unusable clients are `invalid_client`.
 *
 * @example
 * ```ts
 * const client = await resolveClient(deps, "https://app.example/oauth/client.json");
 * ```
 */
export async function resolveClient(
  deps: ClientResolverDeps,
  clientId: string,
): Promise<ResolvedClient> {
  const url = metadataDocumentUrl(clientId);
  if (url) {
    const document = await deps.fetchJson(url);
    const metadata = checkMetadata(document, "invalid_client");
    if ((document as { client_id?: unknown }).client_id !== clientId) {
      throw new OAuthProtocolError(
        "invalid_client",
        "The client's metadata document names another client_id.",
      );
    }
    const method = metadata.token_endpoint_auth_method;
    if (method !== undefined && method !== "none") {
      throw new OAuthProtocolError(
        "invalid_client",
        'A metadata-document client must use token_endpoint_auth_method "none".',
      );
    }
    return {
      clientId,
      clientName: metadata.client_name || url.host,
      redirectUris: metadata.redirect_uris,
      kind: "metadata-document",
    };
  }
  const client = clientId.length <= 200 ? await deps.store.getClient(clientId) : undefined;
  if (!client) throw new OAuthProtocolError("invalid_client", "Unknown client_id.");
  return { ...client, kind: "registered" };
}
