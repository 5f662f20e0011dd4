export { SignInThrottledError } from "./auth-errors.js";
export type { AuthPolicy } from "./auth-policy.js";
export { DEFAULT_AUTH_POLICY, SESSION_TOUCH_INTERVAL_MS } from "./auth-policy.js";
export type { AuthServiceDeps, ConnectedApps, SignedIn, StartedSession } from "./auth-service.js";
export { AuthService, SESSION_ID_PREFIX, SIGN_IN_LINK_PREFIX } from "./auth-service.js";
export type { FirstTeamInput } from "./first-run-setup.js";
export { FirstRunSetup, SETUP_LINK_REFUSED, SETUP_TOKEN_PREFIX } from "./first-run-setup.js";
export type { MemberChange, MemberChangeDeps } from "./member-changes.js";
export { changeMemberRole, endAccessInTeam, removeMember } from "./member-changes.js";
export { MemoryAuthStore } from "./memory-auth-store.js";
export type { PasswordCost } from "./passwords.js";
export {
  DEFAULT_PASSWORD_COST,
  hashPassword,
  PASSWORD_MIN_LENGTH,
  passwordIssue,
  verifyPassword,
} from "./passwords.js";
export type {
  AuthStore,
  FailureWindow,
  SessionRecord,
  SetupTokenRecord,
  SignInLinkRecord,
} from "./types.js";
