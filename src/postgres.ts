// `mcp-yield/postgres`: the PostgreSQL store, in its own entry point so that only its users load a Postgres client.
export { createPostgresStore, postgresStoreSchema, type PostgresStoreOptions, type PostgresQueryable } from "./store/postgres/postgres-store.js";
