import { createMemoryStore } from "mcp-yield";
import { faultSuite } from "../support/fault-suite.js";

// The fault-injection suite (test/support/fault-suite.ts) on the memory store; the Redis and
// PostgreSQL runs are files of their own so the three run side by side.
faultSuite("memory", async () => createMemoryStore());
