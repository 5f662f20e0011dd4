/** Cheap scrypt for tests; the default cost is checked once in auth-service.test.ts. */
export const TEST_PASSWORD_COST = { N: 2 ** 10, r: 8, p: 1 };
