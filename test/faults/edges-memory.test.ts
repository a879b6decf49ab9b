import { createMemoryStore } from "mcp-yield";
import { edgeSuite } from "../support/edge-suite.js";

// The edges of a call (test/support/edge-suite.ts) on the memory store: two instances in one
// process share it, as they share a Redis.
edgeSuite("memory", async () => createMemoryStore());
