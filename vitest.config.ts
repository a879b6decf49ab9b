import { defineConfig } from "vitest/config";

// Tests import the package by name ("mcp-yield", "mcp-yield/server", ...) as users do; the
// "source" export condition points those names at src/ so no build is needed first.
export default defineConfig({
  resolve: { conditions: ["mcp-yield-source"] },
  ssr: { resolve: { conditions: ["mcp-yield-source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
