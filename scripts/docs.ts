// `npm run docs`: the API reference from the doc comments, into dist/docs/api (markdown). Fails
// (exit 1) on any public export without a doc comment, so CI catches one.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from "@microsoft/api-extractor";
import { htmlTablesToMarkdown } from "./markdown-tables.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = `${root}dist/docs`;

/** Every entry point at once: the main one as it is, the others as namespaces named after them. */
const ENTRY = `/** mcp-yield: write interactive MCP tools as generators. */
export * from "../index.js";
/** \`mcp-yield/server\`: serve definitions through the official SDK's McpServer. */
export * as server from "../server/index.js";
/** \`mcp-yield/client\`: the caller's loop (answer asks, retry, follow tasks). */
export * as client from "../client/index.js";
/** \`mcp-yield/wire\`: the protocol's shapes as zod schemas, its constants and error codes. */
export * as wire from "../wire.js";
/** \`mcp-yield/testing\`: drive a definition through every round in-process. */
export * as testing from "../testing/index.js";
/** \`mcp-yield/redis\`: the Redis store. */
export * as redis from "../redis.js";
/** \`mcp-yield/postgres\`: the PostgreSQL store. */
export * as postgres from "../postgres.js";
/** \`mcp-yield/otel\`: round traces as OpenTelemetry spans. */
export * as otel from "../otel.js";
`;

const sources = new Map<string, string[]>();
/** Whether the source line api-extractor points at declares an export (not a member of one). */
function isExportedDeclaration(file: string | undefined, line: number | undefined): boolean {
  if (file === undefined || line === undefined) return true;
  let lines = sources.get(file);
  if (lines === undefined) sources.set(file, (lines = readFileSync(file, "utf8").split("\n")));
  return /^export\s/.test(lines[line - 1] ?? "");
}

/** Build the reference; `probe` is appended to the entry (a test adds an undocumented export). */
export function buildDocs(log: (line: string) => void = (l) => console.error(l), probe = ""): { undocumented: string[]; errors: string[] } {
  rmSync(out, { recursive: true, force: true });
  for (const dir of ["model", "report", "report-temp"]) mkdirSync(`${out}/${dir}`, { recursive: true });
  writeFileSync(`${out}/entry.d.ts`, ENTRY + probe);
  const undocumented: string[] = [];
  const errors: string[] = [];
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: `${out}/entry.d.ts`,
      compiler: { overrideTsconfig: { compilerOptions: { target: "es2022", module: "nodenext", moduleResolution: "nodenext", strict: true, skipLibCheck: true, types: ["node"] } } },
      docModel: { enabled: true, apiJsonFilePath: `${out}/model/mcp-yield.api.json` },
      // The report is where api-extractor notices undocumented exports (ae-undocumented).
      apiReport: { enabled: true, reportFolder: `${out}/report`, reportTempFolder: `${out}/report-temp` },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning },
          "ae-undocumented": { logLevel: ExtractorLogLevel.Warning },
          "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: `${root}package.json`,
  });
  const result = Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message: ExtractorMessage) => {
      // Exported declarations must carry a doc comment; members of them are encouraged, not required.
      if (message.messageId === "ae-undocumented") {
        if (isExportedDeclaration(message.sourceFilePath, message.sourceFileLine))
          undocumented.push(`${message.text} (${message.sourceFilePath?.replace(root, "") ?? ""}:${message.sourceFileLine ?? ""})`);
      } else if (message.messageId === "console-api-report-created" || message.messageId === "console-api-report-copied") {
        // the report is our undocumented-export check, not an artifact to keep
      } else if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning)
        errors.push(`${message.messageId}: ${message.text} (${message.sourceFilePath ?? ""}:${message.sourceFileLine ?? ""})`);
      message.handled = true;
    },
  });
  if (!result.succeeded) errors.push(`api-extractor failed with ${result.errorCount} errors`);
  execFileSync(process.execPath, [`${root}node_modules/@microsoft/api-documenter/bin/api-documenter`, "markdown", "-i", `${out}/model`, "-o", `${out}/api`], { stdio: "pipe" });
  // Plain Markdown: readable in a terminal and in any viewer (api-documenter writes HTML tables).
  for (const file of readdirSync(`${out}/api`).filter((f) => f.endsWith(".md"))) writeFileSync(`${out}/api/${file}`, htmlTablesToMarkdown(readFileSync(`${out}/api/${file}`, "utf8")));
  log(`API reference: ${out}/api/index.md (${undocumented.length} undocumented exports, ${errors.length} other problems)`);
  return { undocumented, errors };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { undocumented, errors } = buildDocs();
  for (const line of [...undocumented, ...errors]) console.error(`  ${line}`);
  process.exitCode = undocumented.length + errors.length > 0 ? 1 : 0;
}
