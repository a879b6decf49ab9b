// What the commands read from outside: the environment and stdin (a test hands in its own).

/** What the commands read from outside: the environment and stdin. */
export interface CliInput {
  env: Record<string, string | undefined>;
  stdin: () => Promise<string>;
}

/** This process's environment and standard input. */
export const processInput: CliInput = {
  env: process.env,
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
};
