import { existsSync } from "node:fs";

/**
 * Chromium from the distribution's packages, for the dashboard's browser test. Under CI=true a
 * missing browser is a failure (`.ci/run` installs it); locally the test skips and says how to
 * install it.
 */
export const CHROMIUM = process.env.MCP_YIELD_TEST_CHROMIUM ?? "/usr/bin/chromium";
const INSTALL = "apt-get install -y chromium";

export const chromiumAvailable: boolean = existsSync(CHROMIUM);
if (!chromiumAvailable) {
  if (process.env.CI === "true") throw new Error(`CI=true and no Chromium at ${CHROMIUM}: the dashboard's browser test must run. Install it: ${INSTALL}`);
  console.warn(`\n[mcp-yield tests] dashboard browser test SKIPPED: no ${CHROMIUM}. Install it with:\n  ${INSTALL}\n(under CI=true a missing Chromium is a failure)\n`);
}
