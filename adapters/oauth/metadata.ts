import { OAUTH_SCOPES } from "./scopes.js";

/**
 * The authorization server's metadata (RFC 8414), served at
 * `/.well-known/oauth-authorization-server`: the code flow with PKCE S256 for public clients,
 * refresh tokens, `iss` in responses (RFC 9207), Client ID Metadata Documents and Dynamic
 * Client Registration.
 *
 * @example
 * ```ts
 * authorizationServerMetadata("https://sluice.example").token_endpoint; // "https://sluice.example/oauth/token"
 * ```
 */
export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
  };
}

/**
 * The MCP endpoint's protected resource metadata (RFC 9728): this server is its own
 * authorization server.
 *
 * @example
 * ```ts
 * protectedResourceMetadata("https://sluice.example/mcp", "https://sluice.example").authorization_servers;
 * ```
 */
export function protectedResourceMetadata(resource: string, issuer: string) {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Sluice",
  };
}
