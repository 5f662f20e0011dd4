export { ambiguousPathProblem, isAmbiguousPath } from "./ambiguous-path.js";
export type { CatalogDeps } from "./catalog-deps.js";
export { CatalogService } from "./catalog-service.js";
export { credentialHeaderIssue, credentialValueIssue } from "./credential-rules.js";
export { SecretBox, SecretUnreadableError } from "./encryption.js";
export {
  budgetPoolIds,
  budgetToGovernorSettings,
  budgetUnallocated,
  governorBudgetId,
  poolToGovernorSettings,
} from "./governor-mapping.js";
export {
  ALL_METHODS,
  allowedMethodsFor,
  keyAllowsMethod,
  readPathsFor,
  SAFE_METHODS,
} from "./key-access.js";
export { MemoryCatalogStore } from "./memory-catalog-store.js";
export type { PoolDatabaseLimits } from "./pool-database.js";
export {
  connectionStringIssue,
  databaseOrigin,
  decryptDatabaseUrl,
  POOL_DATABASE_DEFAULTS,
  sealDatabase,
} from "./pool-database.js";
export type { MintedPoolKey, NewPoolKey } from "./pool-keys.js";
export {
  DEFAULT_KEY_LABEL,
  KEY_LABEL_MAX,
  mintPoolKey,
  parseKeySettings,
  revokePoolKey,
  verifyPoolKey,
} from "./pool-keys.js";
export type { UpstreamCredential } from "./pool-secrets.js";
export { decryptCredential, decryptSigningSecret, sealCredential } from "./pool-secrets.js";
export {
  API_TOKEN_PREFIX,
  generateApiToken,
  generatePoolKey,
  generateSigningSecret,
  hashSecret,
  hasSecretShape,
  lastFour,
  POOL_KEY_PREFIX,
  REQUEST_SECRET_PREFIX,
  SIGNING_SECRET_PREFIX,
  secretsEqual,
} from "./secrets.js";
export type { NewMember, NewTeamWithOwner, TeamWithOwner } from "./teams.js";
export { addMember, createTeamWithOwner, normalizeEmail } from "./teams.js";
export type { AuthenticatedToken, CreatedApiToken, NewApiToken } from "./tokens.js";
export {
  authenticateApiToken,
  createApiToken,
  revokeApiToken,
  TOKEN_TOUCH_INTERVAL_MS,
  touchApiToken,
} from "./tokens.js";
export type {
  Ability,
  ApiTokenRecord,
  BudgetRecord,
  CatalogStore,
  CredentialRecord,
  EncryptedSecret,
  KeyAccess,
  KeyExpiryPreset,
  MembershipRecord,
  PoolBackend,
  PoolDatabaseRecord,
  PoolInput,
  PoolKeyRecord,
  PoolRecord,
  Role,
  TeamRecord,
  TokenLifetime,
  UserRecord,
} from "./types.js";
export { ABILITIES, KEY_EXPIRY_PRESETS, TOKEN_LIFETIMES } from "./types.js";
export { characterCount, groupIssuesByField, parseIsoDateTime } from "./validation.js";
