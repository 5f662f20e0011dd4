import { queryAccessLogTool } from "./access-log-tool.js";
import { whoamiTool } from "./account-tools.js";
import { getBudgetTool, listBudgetsTool } from "./budget-tools.js";
import { listPoolKeysTool, mintPoolKeyTool, revokePoolKeyTool } from "./key-tools.js";
import { getPoolMetricsTool } from "./metrics-tools.js";
import { getPoolStatusTool, getPoolTool, listPoolsTool } from "./pool-tools.js";

/**
 * Every tool of the MCP server. None creates pools or attaches them to budgets: the
 * dashboard does (contract section 1).
 */
export const SLUICE_TOOLS = [
  whoamiTool,
  listBudgetsTool,
  getBudgetTool,
  listPoolsTool,
  getPoolTool,
  getPoolStatusTool,
  getPoolMetricsTool,
  queryAccessLogTool,
  listPoolKeysTool,
  mintPoolKeyTool,
  revokePoolKeyTool,
] as const;
